#!/usr/bin/env python3
"""Check matrix.yaml's pins against what the packages themselves publish on the package index.

For every image, each pinned package must exist at its pinned version, and every requirement that a pinned
package declares (Requires-Dist, markers evaluated for Linux x86_64 and the image's Python) on another pinned
package must be met by that pin: vLLM 0.11.0's `torch==2.8.0`, torchvision's torch, xformers' torch, and so on.
Each engine's `requires` in the matrix must equal what the release declares.

Metadata comes from the index's PEP 658 files when offered, else from the wheel's METADATA read with HTTP
range requests (a few kB, never the whole wheel), else (sdist-only packages) only the version is checked.
Local wheels (--find-links, default $PIP_FIND_LINKS) answer first: that is how `torch==2.13.0+cpu` is checked.

    python scripts/check_pins.py [--matrix matrix.yaml] [--image NAME] [--index URL] [--find-links DIR] [--json]

Exit: 0 all pins agree (or the index is unreachable: nothing to check, said so), 1 some pin disagrees,
2 the matrix itself is invalid.
"""

from __future__ import annotations

import email.parser
import io
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import click  # noqa: E402
from packaging.markers import Marker  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402
from packaging.utils import canonicalize_name, parse_wheel_filename  # noqa: E402
from packaging.version import Version  # noqa: E402

from compat.matrix import MatrixError, ResolvedImage, as_range, load_matrix  # noqa: E402

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
TIMEOUT_S = 30


def _ssl_context() -> ssl.SSLContext:
    """Trust the bundle pip is told to trust (a TLS-intercepting proxy's CA lives there)."""
    for variable in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        if os.environ.get(variable) and Path(os.environ[variable]).is_file():
            return ssl.create_default_context(cafile=os.environ[variable])
    return ssl.create_default_context()


_SSL = _ssl_context()


def _get(url: str, accept: str | None = None, byte_range: tuple[int, int] | None = None) -> bytes:
    headers = {"Accept": accept} if accept else {}
    if byte_range:
        headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=_SSL, timeout=TIMEOUT_S) as r:
        return r.read()


class _RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, enough for zipfile to find one member."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.position = url, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = base + offset
        return self.position

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.size - self.position)
        if count <= 0:
            return 0
        data = _get(self.url, byte_range=(self.position, self.position + count - 1))
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


@dataclass(frozen=True)
class Target:
    """The machine the pins are for: markers are evaluated against it and wheels chosen for it."""

    python: str
    machine: str = "x86_64"

    @property
    def markers(self) -> dict[str, str]:
        return {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": self.machine,
                "os_name": "posix", "python_version": self.python, "python_full_version": f"{self.python}.0",
                "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}

    def wheel_fits(self, filename: str) -> bool:
        _, _, _, tags = parse_wheel_filename(filename)
        cp = "cp" + self.python.replace(".", "")
        return any(
            (tag.interpreter in (cp, "py3", "py2.py3") or tag.abi == "abi3")
            and (tag.platform == "any" or (self.machine in tag.platform and "linux" in tag.platform))
            for tag in tags
        )


class Index:
    """Project pages and wheel metadata from a PEP 691 JSON simple index plus local wheel folders."""

    def __init__(self, url: str, find_links: list[Path]) -> None:
        self.url, self.find_links = url.rstrip("/"), find_links
        self._pages: dict[str, list[dict]] = {}

    def files(self, name: str) -> list[dict]:
        name = canonicalize_name(name)
        if name not in self._pages:
            local = [{"filename": p.name, "path": p} for folder in self.find_links for p in folder.glob("*.whl")
                     if canonicalize_name(p.name.split("-")[0]) == name]
            page = f"{self.url}/{name}/"
            remote = [{**f, "url": urllib.parse.urljoin(page, f["url"])}  # PEP 691 URLs may be relative
                      for f in json.loads(_get(page, SIMPLE_JSON))["files"]]
            self._pages[name] = local + remote
        return self._pages[name]

    def versions(self, name: str) -> set[Version]:
        found = set()
        for file in self.files(name):
            filename = file["filename"]
            try:
                if filename.endswith(".whl"):
                    found.add(parse_wheel_filename(filename)[1])
                elif filename.endswith((".tar.gz", ".zip")):
                    found.add(Version(filename.rsplit("-", 1)[1].removesuffix(".tar.gz").removesuffix(".zip")))
            except ValueError:
                continue
        return found

    def requirements(self, name: str, version: str, target: Target) -> list[Requirement] | None:
        """Requires-Dist of the wheel for `target` (extras dropped, markers applied); None: no wheel."""
        wanted = Version(version)
        wheels = [f for f in self.files(name) if f["filename"].endswith(".whl")
                  and parse_wheel_filename(f["filename"])[1] == wanted and target.wheel_fits(f["filename"])]
        if not wheels:
            return None
        wheel = wheels[0]
        if "path" in wheel:
            with zipfile.ZipFile(wheel["path"]) as archive:
                text = archive.read(_metadata_member(archive)).decode()
        elif wheel.get("core-metadata") or wheel.get("data-dist-info-metadata"):
            text = _get(wheel["url"] + ".metadata").decode()
        else:
            with zipfile.ZipFile(io.BufferedReader(_RangeFile(wheel["url"], wheel["size"]), 1 << 16)) as archive:
                text = archive.read(_metadata_member(archive)).decode()
        requirements = []
        for line in email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(target.markers):
                requirements.append(requirement)
        return requirements


def _metadata_member(archive: zipfile.ZipFile) -> str:
    return next(n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))


@dataclass(frozen=True)
class Finding:
    status: str  # OK, FAIL, SKIP
    image: str
    package: str
    detail: str


def check_image(image: ResolvedImage, index: Index) -> list[Finding]:
    """Each pin exists, and every pinned package's declared requirements on other pins are met."""
    target = Target(image.platform.python)
    pins = {canonicalize_name(k): v for k, v in image.versions.items()}
    findings = []
    for package, version in pins.items():
        try:
            findings.append(_check_pin(image, package, version, pins, index, target))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, StopIteration) as exc:
            findings.append(Finding("FAIL", image.name, package, f"{version}: could not read its metadata ({exc})"))
    return findings


def _check_pin(image: ResolvedImage, package: str, version: str, pins: dict[str, str], index: Index,
               target: Target) -> Finding:
    """One pin: published, and its requirements on the image's other pins met."""
    published = index.versions(package)
    if Version(version) not in published and Version(Version(version).public) not in published:
        return Finding("FAIL", image.name, package, f"{version} is not published on the index")
    if package in {canonicalize_name(p) for p in image.image.build_from_source}:
        return Finding("SKIP", image.name, package,
                       f"{version} exists; compiled in the builder stage, so the published wheel's requirements "
                       "do not apply")
    requirements = index.requirements(package, version, target)
    if requirements is None:
        return Finding("SKIP", image.name, package, f"{version} exists; no {target.machine} wheel for Python "
                       f"{target.python} to read requirements from (sdist or local build)")
    problems = [
        f"requires {req.name}{req.specifier}, pinned {pins[canonicalize_name(req.name)]}"
        for req in requirements
        if canonicalize_name(req.name) in pins and str(req.specifier)
        and not req.specifier.contains(pins[canonicalize_name(req.name)], prereleases=True)
    ]
    return Finding("FAIL" if problems else "OK", image.name, package,
                   "; ".join(problems) or f"{version}: its requirements on other pins agree")


def check_engine_declarations(images: list[ResolvedImage], index: Index) -> list[Finding]:
    """The matrix's `requires` for each engine equals what the release declares."""
    findings, seen = [], set()
    for image in images:
        engine = image.engine
        key = (engine.package, engine.version)
        if key in seen:
            continue
        seen.add(key)
        declared = index.requirements(engine.package, engine.version, Target(image.platform.python))
        if declared is None:
            continue
        by_name = {canonicalize_name(r.name): r for r in declared}
        for package, spec in engine.requires.items():
            requirement = by_name.get(canonicalize_name(package))
            written = as_range(spec)
            if requirement is None:
                findings.append(Finding("FAIL", image.image.engine, package,
                                        f"matrix says {written}, {engine.package} {engine.version} declares nothing"))
            elif requirement.specifier != SpecifierSet(written):
                findings.append(Finding("FAIL", image.image.engine, package,
                                        f"matrix says {written}, the release declares {requirement.specifier}"))
    return findings


@click.command()
@click.option("--matrix", "matrix_path", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--image", "names", multiple=True, help="Only these images (entry names or tags).")
@click.option("--index", "index_url", default=lambda: os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple"),
              show_default="$PIP_INDEX_URL or https://pypi.org/simple", help="PEP 691 simple index.")
@click.option("--find-links", "find_links", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              default=lambda: [p for p in os.environ.get("PIP_FIND_LINKS", "").split() if Path(p).is_dir()],
              help="Local wheel folders that answer first (default: $PIP_FIND_LINKS).")
@click.option("--json", "as_json", is_flag=True)
def main(matrix_path: Path | None, names: tuple[str, ...], index_url: str, find_links: tuple[Path, ...],
         as_json: bool) -> None:
    """Check the matrix's pins against the packages' published metadata."""
    try:
        matrix = load_matrix(matrix_path)
        images = [matrix.resolve(n) for n in names] if names else list(matrix.resolved.values())
    except MatrixError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    index = Index(index_url, [Path(p) for p in find_links])
    try:
        index.files("pip")
    except (urllib.error.URLError, OSError) as exc:
        click.echo(f"package index {index_url} unreachable ({exc}); pins not checked", err=True)
        return
    per_image: dict[str, list[Finding]] = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = {pool.submit(check_image, image, index): image.name for image in images}
        for done in as_completed(futures):  # progress: a line per image as its checks finish
            per_image[futures[done]] = done.result()
            click.echo(f"checked {futures[done]} ({len(per_image)}/{len(images)})", err=True)
    findings = check_engine_declarations(images, index) + [f for i in images for f in per_image[i.name]]
    failed = [f for f in findings if f.status == "FAIL"]
    if as_json:
        click.echo(json.dumps([f.__dict__ for f in findings], indent=2))
    else:
        for finding in findings:
            if finding.status != "OK":
                click.echo(f"{finding.status:4} {finding.image}: {finding.package}: {finding.detail}")
        ok = sum(f.status == "OK" for f in findings)
        click.echo(f"{ok} pins agree, {len(failed)} disagree, {len(findings) - ok - len(failed)} only checked to exist")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
