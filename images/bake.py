"""A buildx bake file (JSON) for the whole matrix: one target per image, one group per platform kind."""

from __future__ import annotations

from compat.matrix import Matrix
from images.plan import plan_build


def bake_file(matrix: Matrix, registry: str | None = None) -> dict:
    """The bake definition; `docker buildx bake -f FILE [TARGET|GROUP] --push` builds and publishes."""
    targets: dict[str, dict] = {}
    groups: dict[str, list[str]] = {"default": []}
    for name, image in matrix.resolved.items():
        plan = plan_build(image, matrix.source)
        repository = registry or matrix.registry
        targets[name] = {
            "context": ".",
            "dockerfile": plan.dockerfile,
            "tags": [f"{repository}:{tag}" for tag in image.tags],
            "args": plan.build_args,
            "labels": {"ai.verl.image.entry": name},
        }
        groups["default"].append(name)
        groups.setdefault(image.platform.kind, []).append(name)
    return {"group": {name: {"targets": members} for name, members in groups.items()}, "target": targets}
