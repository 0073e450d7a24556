"""GPUs and NPUs: present or not, driver new enough, architecture built for."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from compat.checks import fail, passed, skip, warn
from compat.rules import rule
from compat.units import gib

VENDOR_OF_PLATFORM = {"cuda": "nvidia", "rocm": "amd", "ascend": "ascend"}
PLATFORM_OF_VENDOR = {vendor: platform for platform, vendor in VENDOR_OF_PLATFORM.items()}
# `docker run` flags that hand each kind of device to a container.
DEVICE_FLAGS = {
    "cuda": "--gpus all",
    "rocm": "--device /dev/kfd --device /dev/dri --group-add video",
    "ascend": "--device /dev/davinci0 --device /dev/davinci_manager --device /dev/hisi_hdc "
    "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
}
_EXPOSE = {
    vendor: f"start the container with `{DEVICE_FLAGS[platform]}`" for platform, vendor in VENDOR_OF_PLATFORM.items()
}
_EXPOSE["nvidia"] += " (NVIDIA Container Toolkit) and check `nvidia-smi` on the host"


def major_minor(version: str) -> str:
    return ".".join(map(str, Version(version).release[:2]))


def older(a: str, b: str) -> bool:
    """a < b as versions; False when either is not a version (a driver reporting 'N/A')."""
    try:
        return Version(a) < Version(b)
    except InvalidVersion:
        return False


def _describe(report) -> str:
    names: dict[str, int] = {}
    for d in report.devices:
        arch = "" if d.arch == d.name else f"compute {d.arch}, " if report.vendor == "nvidia" else f"{d.arch}, "
        key = f"{d.name} ({arch}{gib(d.memory_bytes)})"
        names[key] = names.get(key, 0) + 1
    listed = ", ".join(f"{n} x {key}" for key, n in names.items())
    driver = f"; driver {report.driver_version}" if report.driver_version else ""
    stack = {"nvidia": "CUDA up to", "amd": "ROCm", "ascend": "CANN"}[report.vendor]
    stack = f", {stack} {report.stack_version}" if report.stack_version else ""
    return f"{listed}{driver}{stack} (via {report.source})"


@rule("nvidia", "amd", "ascend")
def accelerators(ctx):
    reports = [ctx.fact(v) for v in ("nvidia", "amd", "ascend")]
    target = ctx.target
    wanted = VENDOR_OF_PLATFORM.get(target.platform) if target else None
    for report in reports:
        if report.problem:
            level = fail if report.vendor == wanted else warn
            yield level(
                f"gpu:{report.vendor}",
                f"{report.source} is installed but fails: {report.problem}",
                f"load the driver on the host (`{report.source}` must work there), then {_EXPOSE[report.vendor]}",
            )
        elif report.present:
            yield passed(f"gpu:{report.vendor}", _describe(report))
    if any(r.present or r.problem for r in reports):
        return
    notes = "; ".join(r.note for r in reports if r.note)
    if target is None:
        yield skip("gpu", f"no GPU or NPU found ({notes})")
    elif wanted is None:
        yield passed("gpu", f"no GPU or NPU found, as expected for the CPU image {target.tag}")
    else:
        yield warn(
            "gpu",
            f"no {wanted} device visible, but image {target.tag} is built for {target.platform} ({notes})",
            f"run on a host with {wanted} devices and {_EXPOSE[wanted]}; for CPU-only work use a cpu image",
        )


def _host_cuda(ctx) -> tuple[str | None, str]:
    """The CUDA version whose driver requirement applies: the image's, else the installed runtime's."""
    if ctx.target and ctx.target.platform == "cuda":
        return ctx.target.accelerator.get("cuda"), f"image {ctx.target.tag}"
    stack = ctx.facts["cuda_stack"].value if ctx.facts["cuda_stack"].ok else None
    if stack and stack.cuda_runtime:
        return stack.cuda_runtime, "the installed CUDA runtime"
    return None, ""


def _images_for_driver(matrix, driver: str) -> list[str]:
    fits = []
    for resolved in matrix.resolved.values():
        if resolved.platform.kind != "cuda":
            continue
        needed = matrix.rules.min_driver_for(resolved.platform.cuda)
        if needed and not older(driver, needed):
            fits.append(resolved.aliases[0] if resolved.aliases else resolved.immutable_tag)
    return fits


@rule("nvidia", "cuda_stack")
def nvidia_driver(ctx):
    report = ctx.fact("nvidia")
    if not report.present or not report.driver_version:
        return
    cuda, why = _host_cuda(ctx)
    if cuda is None:
        yield skip("driver", f"NVIDIA driver {report.driver_version}; no CUDA image or runtime to compare it with")
        return
    if ctx.matrix is None:
        yield skip("driver", f"NVIDIA driver {report.driver_version}; {ctx.matrix_note}")
        return
    needed = ctx.matrix.rules.min_driver_for(cuda)
    if needed is None:
        yield warn(
            "driver",
            f"the matrix has no minimum driver for CUDA {major_minor(cuda)} ({why})",
            f"add CUDA {major_minor(cuda)} to rules.min_driver in the matrix, or use an image the matrix lists",
        )
    elif older(report.driver_version, needed):
        others = _images_for_driver(ctx.matrix, report.driver_version)
        alternative = f", or use an image built for an older CUDA: {', '.join(others)}" if others else ""
        yield fail(
            "driver",
            f"NVIDIA driver {report.driver_version} is older than {needed}, the minimum for "
            f"CUDA {major_minor(cuda)} ({why}); CUDA calls will fail with 'driver version is insufficient'",
            f"upgrade the host's NVIDIA driver to {needed} or newer{alternative}",
            expected=f">={needed}",
            actual=report.driver_version,
        )
    else:
        yield passed(
            "driver",
            f"NVIDIA driver {report.driver_version} >= {needed}, the minimum for CUDA {major_minor(cuda)} ({why})",
            expected=f">={needed}",
            actual=report.driver_version,
        )


def _arch_matches(vendor: str, device_arch: str, built: list[str]) -> bool:
    if vendor == "ascend":
        # npu-smi names A2 chips by SKU ("910B4-1") and A3 chips plainly ("Ascend910"); the matrix lists
        # SoC targets ("ascend910b", "ascend910_93").
        name = device_arch.lower().removeprefix("ascend")
        socs = [arch.lower().removeprefix("ascend") for arch in built]
        return any(name.startswith(soc) or (name == "910" and soc.startswith("910_")) for soc in socs)
    return device_arch in built


def _images_with_arch(matrix, vendor: str, arch: str) -> list[str]:
    return [
        r.aliases[0] if r.aliases else r.immutable_tag
        for r in matrix.resolved.values()
        if r.platform.kind == PLATFORM_OF_VENDOR[vendor] and _arch_matches(vendor, arch, r.image.gpu_archs)
    ]


@rule("nvidia", "amd", "ascend")
def gpu_architecture(ctx):
    target = ctx.target
    if target is None or not target.is_gpu:
        return
    report = ctx.fact(VENDOR_OF_PLATFORM[target.platform])
    if not report.present:
        return
    if any("N/A" in d.arch or d.arch == "unknown" for d in report.devices):
        yield warn(
            "gpu-arch",
            f"{report.source} does not report the GPU architecture",
            f"update the {report.vendor} driver (NVIDIA: compute_cap needs driver 510 or newer) and rerun",
        )
        return
    missing = sorted({d.arch for d in report.devices if not _arch_matches(report.vendor, d.arch, target.gpu_archs)})
    built = ", ".join(target.gpu_archs) or "none listed"
    if not missing:
        yield passed(
            "gpu-arch",
            f"{', '.join(sorted({d.arch for d in report.devices}))} is among the architectures "
            f"image {target.tag} is built for ({built})",
        )
        return
    others = [t for arch in missing for t in _images_with_arch(ctx.matrix, report.vendor, arch)] if ctx.matrix else []
    instead = (
        f"use image {', '.join(dict.fromkeys(others))}"
        if others
        else (f"build a custom image whose gpu_archs include {', '.join(missing)} (add it to the entry in matrix.yaml)")
    )
    yield fail(
        "gpu-arch",
        f"this {report.vendor} device is {', '.join(missing)}, but image {target.tag} is built for "
        f"{built}; kernels will fail with 'no kernel image is available for execution on the device'",
        instead,
        expected=built,
        actual=", ".join(missing),
    )
