"""From a resolved matrix entry to what the Dockerfile templates need: build arguments, package groups,
stages and distro packages. Pure data in, data out; the templates only place these values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compat.matrix import ResolvedImage

RENDERED_DIR = "dockerfiles/rendered"

# Installed in the first pip layer: the biggest downloads, which change least often.
TORCH_FAMILY = ("torch", "torchvision", "torchaudio", "torchcodec", "torch-npu")
# Training-backend extensions, installed after the engine (some are compiled in the builder stage).
NATIVE_EXTRAS = ("flash-attn", "megatron-core", "transformer-engine", "transformer-engine-cu12", "transformer-engine-cu13",
                 "transformer-engine-torch", "apex")
# What `pip wheel --no-build-isolation` needs besides torch; unpinned, they only run in the builder stage.
BUILD_TOOLS = ("ninja", "cmake", "packaging", "wheel", "setuptools", "setuptools-scm", "jinja2", "psutil")

# Environment for compiling a source-only package, by package and platform kind ("*": any platform).
SOURCE_BUILD_ENV = {
    ("vllm", "rocm"): "VLLM_TARGET_DEVICE=rocm",
    ("vllm", "ascend"): "VLLM_TARGET_DEVICE=empty",  # vllm-ascend's documented way: Python-only vllm
    ("flash-attn", "*"): "FLASH_ATTENTION_FORCE_BUILD=TRUE",  # compile, never fetch a prebuilt wheel
    ("transformer-engine-torch", "*"): "NVTE_FRAMEWORK=pytorch",
}

# Distro packages per stage. The runtime stage gets no compiler; the builder gets the toolchain.
APT_PACKAGES = {
    "runtime": {"cpu": ["python3", "python3-venv", "git", "libnuma1"], "ascend": ["git"]},
    "builder": {"ascend": ["git", "build-essential"]},
}
APT_DEFAULT = {"runtime": ["python3", "python3-venv", "git"], "builder": ["python3", "python3-venv", "python3-dev",
                                                                          "git", "build-essential"]}


def version_arg_name(package: str) -> str:
    """Build argument that carries a package's version: flash-attn -> FLASH_ATTN_VERSION."""
    return re.sub(r"[^A-Za-z0-9]", "_", package).upper() + "_VERSION"


def dockerfile_path(entry: str) -> str:
    """Where an entry's rendered Dockerfile lives, relative to the repository root."""
    return f"{RENDERED_DIR}/{entry}.Dockerfile"


@dataclass(frozen=True)
class VersionArg:
    name: str  # TORCH_VERSION
    package: str  # torch
    value: str  # 2.8.0

    @property
    def ref(self) -> str:
        return "${" + self.name + "}"

    @property
    def requirement(self) -> str:
        return f'"{self.package}=={self.ref}"'


@dataclass(frozen=True)
class SourceBuild:
    package: str
    ref: str
    env: str  # VAR=value assignments for the compile, or ""

    @property
    def command(self) -> str:
        wheel = f'pip wheel --no-deps --no-build-isolation --wheel-dir /wheels "{self.package}=={self.ref}"'
        return f"{self.env} {wheel}" if self.env else wheel


@dataclass(frozen=True)
class BuildPlan:
    dockerfile: str
    version_args: list[VersionArg]
    requirements: dict[str, list[str]]
    source_packages: list[SourceBuild]
    native_names: list[str]
    apt_packages: dict[str, list[str]]
    venv_flags: str
    verl_extras: str
    source_url: str
    build_args: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)  # package -> why, uninstalled after the engine


def accelerator_pins(image: ResolvedImage) -> dict[str, str]:
    """cuDNN and NCCL ship as pip wheels that torch loads, so the matrix's versions become pins too."""
    platform = image.platform
    if platform.kind != "cuda":
        return {}
    major = platform.cuda.split(".")[0]
    return {f"nvidia-cudnn-cu{major}": platform.cudnn, f"nvidia-nccl-cu{major}": platform.nccl}


def plan_build(image: ResolvedImage, source_url: str) -> BuildPlan:
    """Everything the templates need for one image, derived from its matrix entry."""
    kind = image.platform.kind
    pins = {**image.versions, **accelerator_pins(image)}
    args = [VersionArg(version_arg_name(pkg), pkg, version) for pkg, version in pins.items()]
    by_package = {arg.package: arg for arg in args}
    from_source = image.image.build_from_source
    installable = [pkg for pkg in image.versions if pkg not in from_source]

    torch = [by_package[p].requirement for p in installable if p in TORCH_FAMILY]
    native = [by_package[p].requirement for p in installable if p in NATIVE_EXTRAS]
    stack = [by_package[p].requirement for p in installable if p not in TORCH_FAMILY and p not in NATIVE_EXTRAS]
    if from_source:
        native.append("/tmp/built-wheels/*.whl")
    sources = [
        SourceBuild(pkg, by_package[pkg].ref, SOURCE_BUILD_ENV.get((pkg, kind), SOURCE_BUILD_ENV.get((pkg, "*"), "")))
        for pkg in from_source
    ]
    apt = {stage: APT_PACKAGES[stage].get(kind, APT_DEFAULT[stage]) for stage in APT_PACKAGES}
    return BuildPlan(
        dockerfile=dockerfile_path(image.name),
        version_args=args,
        requirements={"torch": torch, "stack": stack, "native": native, "build_tools": list(BUILD_TOOLS)},
        source_packages=sources,
        native_names=[p for p in image.versions if p in NATIVE_EXTRAS or p in from_source],
        apt_packages=apt,
        # CANN's own Python packages (te, hccl tools) live in the base image's site-packages.
        venv_flags="--system-site-packages " if kind == "ascend" else "",
        verl_extras="train,gpu" if kind == "cuda" else "train",
        source_url=source_url,
        build_args={arg.name: arg.value for arg in args},
        removed=dict(image.image.remove),
    )
