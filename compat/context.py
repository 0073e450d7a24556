"""What the rules judge: the probes' facts, the matrix, and the image the machine is judged against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compat.probing import Outcome


@dataclass(frozen=True)
class Target:
    """One image's requirements, from its matrix entry or, inside an image, from its manifest."""

    name: str  # the matrix entry name
    tag: str  # the tag to show and to pull
    platform: str  # "cuda", "rocm", "ascend" or "cpu"
    accelerator: dict[str, str]  # e.g. {"cuda": "12.8", "cudnn": "9.10", "nccl": "2.27"}; empty for cpu
    gpu_archs: list[str]  # "8.0", "9.0" for CUDA; "gfx942" for ROCm; chip names for Ascend
    pins: dict[str, str]  # distribution -> exact version the image was built with
    source: str  # "manifest" (we run inside it) or "matrix" (named with --image)
    rule_versions: dict[str, str] = field(default_factory=dict)  # pins + accelerator + python, for known-bad rules
    verl_version: str | None = None
    git_revision: str | None = None

    @property
    def is_gpu(self) -> bool:
        return self.platform != "cpu"


@dataclass
class Context:
    facts: dict[str, Outcome]
    matrix: Any | None  # compat.matrix.Matrix, None when no matrix file could be found
    target: Target | None
    matrix_note: str | None = None  # why there is no matrix, for the checks that need one
    inside_image: bool = False  # a verl image manifest was found: the installed packages are the image's
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def host_only(self) -> bool:
        """--image from outside that image: only the host (GPU, driver, limits) matters; the image brings
        its own packages, so this machine's Python environment is not judged."""
        return self.target is not None and not self.inside_image

    def fact(self, name: str) -> Any:
        return self.facts[name].value
