"""Turn a matrix entry plus the user's options into the exact engine command, stage the extra build
inputs (wheelhouse, CA certificates) into the build context, and run the build with its output streamed.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from compat.matrix import MatrixError, ResolvedImage

ENGINES = ("docker", "buildx")
WHEELHOUSE_STAGE = Path("dockerfiles/context/wheels")
CA_STAGE = Path("dockerfiles/context/ca-certificates")
_ARG_LINE = re.compile(r"^ARG\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


@dataclass
class BuildRequest:
    """What the user asked for on the command line."""

    engine: str = "docker"
    tags: list[str] = field(default_factory=list)
    build_args: dict[str, str] = field(default_factory=dict)
    base_image: str | None = None
    wheelhouse: Path | None = None
    ca_certs: list[Path] = field(default_factory=list)
    pip_index: str | None = None
    extra_pip: list[str] = field(default_factory=list)
    push: bool = False
    no_cache: bool = False


@dataclass
class BuildPlanCommand:
    """The commands to run, with the environment they need and the files to stage first."""

    env: dict[str, str]
    commands: list[list[str]]
    staged: list[tuple[Path, Path]]  # (source, destination relative to the root)

    def render(self) -> str:
        """Shell text: staging as comments, then each command with its environment, one per line."""
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        lines = [f"# stage {src} -> {dst}" for src, dst in self.staged]
        lines += [f"{prefix} {shlex.join(cmd)}".strip() for cmd in self.commands]
        return "\n".join(lines)


def declared_args(dockerfile_text: str) -> list[str]:
    """Build arguments the Dockerfile declares (in order, once each)."""
    return list(dict.fromkeys(_ARG_LINE.findall(dockerfile_text)))


def parse_build_arg(text: str) -> tuple[str, str]:
    """`KEY=VALUE` -> (KEY, VALUE); a bare KEY is refused because it would silently pass the host's value."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise MatrixError(f"'{text}' is not KEY=VALUE", field="--build-arg", allowed="KEY=VALUE, e.g. TORCH_VERSION=2.8.0")
    return key, value


def git_revision(root: Path) -> str:
    """HEAD's commit, with -dirty when the work tree has changes; 'unknown' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def full_reference(image: ResolvedImage, tag: str) -> str:
    """A tag given on the command line: `name:tag` or `registry/name:tag` stays, a bare tag joins the registry."""
    return tag if (":" in tag or "/" in tag) else image.reference(tag)


def plan_command(image: ResolvedImage, request: BuildRequest, root: Path, dockerfile: str,
                 dockerfile_text: str) -> BuildPlanCommand:
    """The exact engine command for this image and request (nothing is run or copied here)."""
    if request.engine not in ENGINES:
        raise MatrixError(f"unknown build engine '{request.engine}'", field="--engine", allowed=", ".join(ENGINES))
    known = declared_args(dockerfile_text)
    args: dict[str, str] = {
        "VERL_GIT_REVISION": git_revision(root),
        "VERL_CREATED": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if request.base_image:
        args["BASE_IMAGE"] = request.base_image
        if not image.platform.runtime_image:  # one image serves both stages on this platform
            args["RUNTIME_IMAGE"] = request.base_image
    if request.pip_index:
        args["PIP_INDEX_URL"] = request.pip_index
    if request.extra_pip:
        args["EXTRA_PIP_PACKAGES"] = " ".join(request.extra_pip)
    if request.wheelhouse:
        args["TORCH_INDEX_URL"] = ""  # air-gapped: the wheelhouse replaces the torch index
    for key, value in request.build_args.items():
        if key not in known:
            raise MatrixError(f"{dockerfile} declares no build argument '{key}'", field="--build-arg",
                              allowed=", ".join(known))
        args[key] = value

    staged = []
    if request.wheelhouse:
        if not request.wheelhouse.is_dir():
            raise MatrixError("not a directory", file=request.wheelhouse, field="--wheelhouse",
                              allowed="a directory of .whl files")
        staged += [(wheel, WHEELHOUSE_STAGE / wheel.name) for wheel in sorted(request.wheelhouse.glob("*.whl"))]
    for cert in request.ca_certs:
        if not cert.is_file():
            raise MatrixError("no such file", file=cert, field="--ca-cert", allowed="a PEM certificate file")
        staged.append((cert, CA_STAGE / (cert.stem + ".crt")))  # update-ca-certificates reads *.crt only

    tags = [full_reference(image, tag) for tag in (request.tags or image.tags)]
    build = ["docker", "buildx", "build"] if request.engine == "buildx" else ["docker", "build"]
    build += ["--progress=plain", "-f", dockerfile]
    for tag in tags:
        build += ["-t", tag]
    for key, value in args.items():
        build += ["--build-arg", f"{key}={value}"]
    if request.no_cache:
        build.append("--no-cache")
    commands = [build]
    if request.engine == "buildx":
        build.append("--push" if request.push else "--load")
    elif request.push:
        commands += [["docker", "push", tag] for tag in tags]
    build.append(".")
    env = {"DOCKER_BUILDKIT": "1"} if request.engine == "docker" else {}
    return BuildPlanCommand(env=env, commands=commands, staged=staged)


@contextmanager
def staged_inputs(plan: BuildPlanCommand, root: Path) -> Iterator[None]:
    """Copy the wheelhouse and CA certificates into the build context for one build, then remove them."""
    copied: list[Path] = []
    try:
        for source, destination in plan.staged:
            target = root / destination
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            copied.append(target)
        yield
    finally:
        for target in copied:
            target.unlink(missing_ok=True)


def run_build(plan: BuildPlanCommand, root: Path) -> int:
    """Run the commands in order with output streamed to the terminal; the first failure's exit code."""
    if shutil.which("docker") is None:
        raise MatrixError("the docker command is not installed", field="--engine",
                          allowed="a machine with Docker (or use --dry-run to print the command)")
    with staged_inputs(plan, root):
        for command in plan.commands:
            code = subprocess.run(command, cwd=root, env={**os.environ, **plan.env}).returncode
            if code != 0:
                return code
    return 0
