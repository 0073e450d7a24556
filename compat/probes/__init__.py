"""The probes doctor runs, each with its own timeout and the fix to print if the probe itself fails.

Probes only gather facts; judging them against the matrix is the rules' job (compat.rules).
Timeouts are ceilings, not costs: the probes run concurrently and most answer in milliseconds.
"""

from __future__ import annotations

from compat.probes.amd import probe_amd
from compat.probes.ascend import probe_ascend
from compat.probes.cuda_libs import probe_cuda_stack
from compat.probes.host import probe_host
from compat.probes.image import probe_manifest, probe_verl_source
from compat.probes.native import NATIVE_MODULES, import_in_child
from compat.probes.nvidia import probe_nvidia
from compat.probes.packages import probe_packages
from compat.probes.system_limits import probe_limits
from compat.probing import Probe

IMPORT_TIMEOUT_S = 30.0  # vllm imports torch and triton: tens of seconds on a cold cache

_SMI_FIX = "run `{tool}` by hand; if it hangs or errors, the driver needs a reload or a reboot"


def _import_probe(dist: str, module: str) -> Probe:
    return Probe(
        f"import:{module}",
        lambda: import_in_child(module, IMPORT_TIMEOUT_S),
        IMPORT_TIMEOUT_S + 2,
        f"run `python -c 'import {module}'` to see the error; reinstall {dist} if it hangs",
        python_env=True,
    )


PROBES: list[Probe] = [
    Probe("host", probe_host, 2, "check that /proc is mounted and readable"),
    Probe("nvidia", probe_nvidia, 10, _SMI_FIX.format(tool="nvidia-smi")),
    Probe("amd", probe_amd, 10, _SMI_FIX.format(tool="rocm-smi")),
    Probe("ascend", probe_ascend, 10, _SMI_FIX.format(tool="npu-smi info")),
    Probe("packages", probe_packages, 5, "run `pip check`; remove broken *.dist-info folders it names"),
    Probe(
        "cuda_stack",
        lambda: probe_cuda_stack(probe_packages()),
        5,
        "run `pip list | grep nvidia-` and check /usr/local/cuda",
    ),
    Probe("limits", probe_limits, 2, "check that /dev/shm is mounted: `df -h /dev/shm`"),
    Probe("manifest", probe_manifest, 2, "the image manifest is damaged: pull the image again"),
    Probe(
        "verl_source",
        probe_verl_source,
        2,
        "reinstall verl: `pip install --no-deps -e <checkout>` or pull the image again",
    ),
    *(_import_probe(dist, module) for dist, module in NATIVE_MODULES.items()),
]
