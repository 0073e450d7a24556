"""The CUDA libraries and the torch build installed in this Python environment, against the image."""

from __future__ import annotations

from compat.checks import fail, passed, skip, warn
from compat.matrix import in_range
from compat.rules import rule
from compat.rules.accelerators import PLATFORM_OF_VENDOR, major_minor


@rule("cuda_stack", "nvidia")
def cuda_libraries(ctx):
    if ctx.host_only:
        return
    stack = ctx.fact("cuda_stack")
    target = ctx.target
    if not (stack.cuda_runtime or stack.cudnn or stack.nccl):
        if target and target.platform == "cuda":
            yield fail(
                "cuda-libs",
                "no CUDA runtime, cuDNN or NCCL found (no nvidia-* wheels, no /usr/local/cuda)",
                f"reinstall torch with its CUDA libraries: `pip install torch=={target.pins.get('torch', '<pin>')}`"
                " (the image's constraints file pins the rest)",
            )
        else:
            yield skip("cuda-libs", "no CUDA runtime, cuDNN or NCCL installed")
        return
    parts = (
        ("cuda", "cuda_runtime", stack.cuda_runtime),
        ("cudnn", "cudnn", stack.cudnn),
        ("nccl", "nccl", stack.nccl),
    )
    found = ", ".join(f"{label} {version} ({stack.sources[key]})" for label, key, version in parts if version)
    cuda = target.accelerator.get("cuda") if target and target.platform == "cuda" else stack.cuda_runtime
    if (
        target
        and target.platform == "cuda"
        and stack.cuda_runtime
        and major_minor(stack.cuda_runtime) != major_minor(cuda)
    ):
        yield fail(
            "cuda-libs",
            f"CUDA runtime {stack.cuda_runtime} installed, image {target.tag} is built for CUDA {cuda}",
            f"reinstall the matching runtime: `pip install torch=={target.pins.get('torch', '<pin>')}` "
            f"(it pulls nvidia-cuda-runtime for CUDA {major_minor(cuda)})",
        )
        return
    allowed = ctx.matrix.rules.cudnn.get(major_minor(cuda)) if ctx.matrix and cuda else None
    if allowed and stack.cudnn and not in_range(stack.cudnn, allowed):
        yield fail(
            "cuda-libs",
            f"cuDNN {stack.cudnn} is outside {allowed}, the range supported with CUDA {major_minor(cuda)}",
            f"install a supported cuDNN: `pip install 'nvidia-cudnn-cu{cuda.split('.')[0]}{allowed}'`",
            expected=allowed,
            actual=stack.cudnn,
        )
        return
    yield passed("cuda-libs", found)


def torch_kind(torch: str, stack) -> str:
    """cpu, cuda or rocm, from the wheel's local tag; a wheel without one (PyPI's default) is a CUDA build
    exactly when it brought the nvidia-* runtime wheels with it (x86_64), else a CPU build (aarch64)."""
    build = torch.partition("+")[2]
    if build.startswith("rocm"):
        return "rocm"
    if build.startswith("cu") or not build and stack.sources.get("cuda_runtime", "").startswith("wheel"):
        return "cuda"
    return "cpu" if build in ("", "cpu") else build


@rule("packages", "cuda_stack", "nvidia", "amd")
def torch_build(ctx):
    if ctx.host_only:
        return
    torch = ctx.fact("packages").get("torch")
    target = ctx.target
    if torch is None:
        if target is None:
            yield skip("torch", "torch is not installed (needed only for training)")
        else:
            yield fail("torch", "torch is not installed", f"`pip install torch=={target.pins.get('torch', '<pin>')}`")
        return
    kind = torch_kind(torch, ctx.fact("cuda_stack"))
    gpus = [r for r in (ctx.fact("nvidia"), ctx.fact("amd")) if r.present]
    if target is None and kind == "cpu" and gpus:
        platform = PLATFORM_OF_VENDOR[gpus[0].vendor]
        yield warn(
            "torch",
            f"torch {torch} is a CPU build, so the {gpus[0].vendor} GPUs here will not be used",
            f"install a {platform} build of torch (https://pytorch.org/get-started/locally/), or use the image "
            "`verl doctor` recommends for this host",
        )
        return
    if target is None or kind == target.platform or target.platform == "ascend" and kind == "cpu":
        # torch_npu runs on the CPU build of torch, so cpu is right for Ascend too.
        yield passed("torch", f"torch {torch} ({kind} build)")
        return
    level = fail if target.is_gpu else warn
    yield level(
        "torch",
        f"torch {torch} is a {kind} build, image {target.tag} needs a {target.platform} build",
        f"`pip install --force-reinstall torch=={target.pins.get('torch', '<pin>')}` from the {target.platform} index "
        "(the image's PIP_CONSTRAINT and pip config point at it)",
    )
