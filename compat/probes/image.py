"""The image manifest (what the image was built with) and the verl source actually in use."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MANIFEST = "/opt/verl/manifest.json"


@dataclass(frozen=True)
class ManifestRead:
    path: str
    data: dict | None  # None when the file does not exist: not inside one of our images


def manifest_path() -> str:
    return os.environ.get("VERL_IMAGE_MANIFEST") or DEFAULT_MANIFEST


def probe_manifest() -> ManifestRead:
    path = manifest_path()
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return ManifestRead(path, None)
    data = json.loads(text)  # a corrupt manifest raises, and the probe failure names the file
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, not an object")
    return ManifestRead(path, data)


@dataclass(frozen=True)
class VerlSource:
    version: str | None  # from the installed distribution's metadata
    location: str | None  # the directory `import verl` would load
    checkout: bool  # True for an editable install or a source tree on sys.path, False for an installed copy
    project_dir: str | None  # that checkout's root
    git_revision: str | None  # HEAD of that checkout, when it is a git repository


def _git_head(directory: Path) -> str | None:
    """Read HEAD without running git: works in read-only mounts and for any owner (no safe.directory)."""
    git = directory / ".git"
    if git.is_file():  # a worktree or submodule: "gitdir: <path>"
        git = (directory / git.read_text().split(":", 1)[1].strip()).resolve()
    try:
        head = (git / "HEAD").read_text().strip()
    except OSError:
        return None
    if not head.startswith("ref: "):
        return head
    ref = head[5:]
    try:
        return (git / ref).read_text().strip()
    except OSError:
        pass
    try:
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return None


def probe_verl_source() -> VerlSource:
    spec = importlib.util.find_spec("verl")  # locates the package; executes nothing
    location = (
        str(Path(next(iter(spec.submodule_search_locations))).resolve())
        if spec and spec.submodule_search_locations
        else None
    )
    try:
        dist = md.distribution("verl")
        version = dist.version
        direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
    except md.PackageNotFoundError:
        version, direct_url = None, {}
    editable = bool(direct_url.get("dir_info", {}).get("editable"))
    project = str(Path(location).parent) if location else None
    if not editable and project and {"site-packages", "dist-packages"} & set(Path(project).parts):
        project = None  # an installed copy: no checkout to describe
    revision = _git_head(Path(project)) if project else None
    return VerlSource(
        version, location, editable or revision is not None, project if editable or revision else None, revision
    )
