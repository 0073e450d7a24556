"""Process-group setup for FSDP2, also at world size 1 (CPU, gloo).

Launched by torchrun the usual env vars are used; launched as a plain `python` process we start a
one-rank group on a free local port, so the same FSDP2 code path runs in tests and on a laptop.
"""

from __future__ import annotations

import os
import socket

import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

from verl.utils.device import get_device_id, get_device_name, get_dist_backend, get_torch_device, is_accelerator


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def initialize_global_process_group() -> tuple[int, int]:
    """Init (once) the default process group; returns (rank, world_size)."""
    if not dist.is_initialized():
        if "RANK" not in os.environ:  # plain `python`: a group of one
            os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1")
            os.environ.setdefault("MASTER_PORT", str(_free_port()))
        if is_accelerator():
            get_torch_device().set_device(get_device_id())
        dist.init_process_group(backend=get_dist_backend())
    return dist.get_rank(), dist.get_world_size()


def device_mesh() -> DeviceMesh:
    """A 1-D data-parallel mesh over all ranks, for `fully_shard`."""
    return init_device_mesh(get_device_name(), (dist.get_world_size(),), mesh_dim_names=("fsdp",))


def destroy_process_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
