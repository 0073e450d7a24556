"""Decide what the machine is judged against: the image named with --image, else the image we run in."""

from __future__ import annotations

from pydantic import ValidationError

from compat.context import Target
from compat.matrix import Manifest, Matrix, ResolvedImage


def target_from_entry(resolved: ResolvedImage) -> Target:
    return Target(
        name=resolved.name,
        tag=resolved.aliases[0] if resolved.aliases else resolved.immutable_tag,
        platform=resolved.platform.kind,
        accelerator=dict(resolved.platform.accelerator or {}),
        gpu_archs=list(resolved.image.gpu_archs),
        pins=dict(resolved.versions),
        source="matrix",
        rule_versions={k: v for k, v in resolved.rule_versions.items() if v is not None},
        verl_version=resolved.verl_version,
    )


def target_from_manifest(data: dict) -> Target:
    """The manifest states what this image holds; it wins over the matrix, which may be newer than the image."""
    manifest = Manifest.model_validate(data, strict=False)  # JSON has no tuples or dates: lax types are fine
    return Target(
        name=manifest.entry,
        tag=manifest.tags[0] if manifest.tags else manifest.immutable_tag,
        platform=manifest.platform,
        accelerator=dict(manifest.accelerator or {}),
        gpu_archs=list(manifest.gpu_archs),
        pins=dict(manifest.versions),
        source="manifest",
        rule_versions={**manifest.versions, **(manifest.accelerator or {})},
        verl_version=manifest.verl_version,
        git_revision=None if manifest.git_revision in ("", "unknown") else manifest.git_revision,
    )


class BadManifest(ValueError):
    pass


def choose_target(image: str | None, matrix: Matrix | None, manifest: dict | None) -> Target | None:
    """--image wins (MatrixError if unknown); inside an image, its manifest; else no target."""
    if image is not None:
        if matrix is None:
            raise LookupError("--image needs the version matrix, and none could be loaded")
        return target_from_entry(matrix.resolve(image))
    if manifest is not None:
        try:
            return target_from_manifest(manifest)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise BadManifest(f"field '{'.'.join(map(str, first['loc']))}': {first['msg']}") from None
    return None
