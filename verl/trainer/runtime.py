"""Process set-up shared by the trainers: device choice, threads, seeds, process group, error exits."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sys
from typing import Iterator

from rich.console import Console

from verl.utils.errors import UserError


def configure_process(device: str, num_threads: int, seed: int) -> None:
    """Pin the device (before torch picks one), CPU threads and all RNG seeds."""
    if device != "auto":
        os.environ["VERL_DEVICE"] = device
    import numpy as np
    import torch

    from verl.utils.device import get_device_name, is_cuda_available, is_npu_available

    name = get_device_name()
    if (name == "cuda" and not is_cuda_available()) or (name == "npu" and not is_npu_available()):
        raise UserError(f"config error: trainer.device={name} but no {name} device is visible; allowed here: auto, cpu")
    if num_threads > 0:
        torch.set_num_threads(num_threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # transformers and HF hub must never try the network (none is reachable in our images' CI).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars for a 1 MB model are noise next to ours


@contextlib.contextmanager
def user_errors_exit(console: Console | None = None) -> Iterator[None]:
    """Turn a UserError into its message on stderr and exit code 2, with no traceback."""
    try:
        yield
    except UserError as exc:
        (console or Console(stderr=True)).print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        sys.exit(exc.exit_code)
