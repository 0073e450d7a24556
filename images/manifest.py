"""Write /opt/verl/manifest.json during an image build.

The manifest starts from the matrix entry and takes its versions from the image's constraints file,
which the Dockerfile wrote from the version build arguments: a custom build (`--build-arg TORCH_VERSION=...`)
therefore records what it really pinned, not what the matrix says.

    python -m images.manifest --entry cpu --constraints /opt/verl/constraints.txt --output /opt/verl/manifest.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from packaging.requirements import InvalidRequirement, Requirement

from compat.matrix import Manifest, MatrixError, load_matrix


def read_constraints(path: Path) -> dict[str, str]:
    """`name==version` lines -> {name: version}; blank lines and comments are skipped."""
    pins: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            raise MatrixError(f"not a pin: {exc}", file=path, line=number, allowed="name==version") from None
        specs = list(requirement.specifier)
        if len(specs) != 1 or specs[0].operator != "==":
            raise MatrixError(f"'{line}' is not an exact pin", file=path, line=number, allowed="name==version")
        pins[requirement.name] = specs[0].version
    return pins


def build_manifest(matrix_path: Path | None, entry: str, constraints: Path | None,
                   git_revision: str, created: str) -> Manifest:
    """The entry's manifest, its versions replaced by the constraints' pins when a constraints file is given."""
    image = load_matrix(matrix_path).resolve(entry)
    manifest = image.manifest(git_revision=git_revision, created=created)
    if constraints is not None:
        manifest = manifest.model_copy(update={"versions": read_constraints(constraints)})
    return Manifest.model_validate(manifest.model_dump())


@click.command()
@click.option("--matrix", "matrix_path", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--entry", required=True, help="Matrix entry (or tag) the image was built from.")
@click.option("--constraints", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--git-revision", default="unknown")
@click.option("--created", default="unknown")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Default: stdout.")
def main(matrix_path: Path | None, entry: str, constraints: Path | None, git_revision: str, created: str,
         output: Path | None) -> None:
    """Write the image manifest JSON."""
    try:
        manifest = build_manifest(matrix_path, entry, constraints, git_revision, created)
    except MatrixError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    text = json.dumps(manifest.model_dump(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
