"""Render one Dockerfile per matrix entry (plus the support table) and check committed copies for drift.

Usage: `verl images render [--check] [NAME...]`. Rendering all entries wipes dockerfiles/rendered/ first,
so no stale file survives a removed entry. Output is deterministic: no dates, no paths, matrix order.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from compat.matrix import Matrix, MatrixError, ResolvedImage
from images.plan import RENDERED_DIR, BuildPlan, plan_build
from images.support import SUPPORT_DOC, render_support

TEMPLATES_DIR = "dockerfiles/templates"
ROOT_TEMPLATE = "Dockerfile.j2"
RENDER_COMMAND = "verl images render"


@dataclass(frozen=True)
class Layout:
    """Where templates and outputs live: relative to the directory holding the matrix file."""

    root: Path

    @classmethod
    def for_matrix(cls, matrix_path: Path) -> Layout:
        return cls(Path(matrix_path).resolve().parent)

    @property
    def templates(self) -> Path:
        return self.root / TEMPLATES_DIR

    @property
    def rendered(self) -> Path:
        return self.root / RENDERED_DIR


@functools.lru_cache(maxsize=8)
def make_environment(templates: Path) -> jinja2.Environment:
    """Jinja with StrictUndefined: a misspelt or missing variable is an error, never an empty string.

    Cached per folder; Jinja's auto_reload still notices edited template files.
    """
    if not (templates / ROOT_TEMPLATE).is_file():
        raise MatrixError(f"template folder has no {ROOT_TEMPLATE}", file=templates,
                          allowed=f"a checkout with {TEMPLATES_DIR}/{ROOT_TEMPLATE} next to the matrix file")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["quoted"] = dockerfile_quoted
    return env


def dockerfile_quoted(text: str) -> str:
    """A double-quoted Dockerfile word: quotes, backslashes and `$` (variable expansion) escaped."""
    return '"' + re.sub(r'(["\\$])', r"\\\1", str(text)) + '"'


def _template_location(exc: BaseException, templates: Path) -> tuple[Path | None, int | None]:
    """The innermost template frame of a Jinja error: Jinja rewrites tracebacks to template files and lines."""
    found: tuple[Path | None, int | None] = (None, None)
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(".j2"):
            found = (Path(filename), tb.tb_lineno)
        tb = tb.tb_next
    path, line = found
    if path is not None and path.is_relative_to(templates.parent.parent):
        path = path.relative_to(templates.parent.parent)
    return path, line


def render_dockerfile(env: jinja2.Environment, image: ResolvedImage, build: BuildPlan, templates: Path) -> str:
    """One entry's Dockerfile text; template mistakes become MatrixErrors naming template, line and variable."""
    try:
        return env.get_template(ROOT_TEMPLATE).render(image=image, build=build)
    except jinja2.UndefinedError as exc:
        path, line = _template_location(exc, templates)
        variable = re.findall(r"'([^']+)'", str(exc))
        raise MatrixError(
            f"template uses an undefined variable: {exc.message}",
            file=path or templates, line=line, entry=f"images.{image.name}",
            field=variable[-1] if variable else None,
            allowed="image.* (the resolved entry, see `verl images show NAME`) and build.* (images/plan.py BuildPlan)",
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise MatrixError(f"template syntax error: {exc.message}", file=exc.filename or exc.name,
                          line=exc.lineno, entry=f"images.{image.name}") from None
    except jinja2.TemplateNotFound as exc:
        raise MatrixError(f"template not found: {exc.name}", file=templates, entry=f"images.{image.name}",
                          allowed="files under " + TEMPLATES_DIR) from None


def render_outputs(matrix: Matrix, layout: Layout, names: list[str] | None = None) -> dict[Path, str]:
    """Path (relative to the root) -> text, for the chosen entries (default: all, plus the support table)."""
    env = make_environment(layout.templates)
    chosen = [matrix.resolve(name) for name in names] if names else list(matrix.resolved.values())
    outputs = {}
    for image in chosen:
        build = plan_build(image, matrix.source)
        outputs[Path(build.dockerfile)] = render_dockerfile(env, image, build, layout.templates)
    if not names:
        outputs[Path(SUPPORT_DOC)] = render_support(matrix)
    return outputs


def write_outputs(outputs: dict[Path, str], layout: Layout, wipe: bool) -> list[Path]:
    """Write the outputs; with `wipe`, first delete every rendered Dockerfile so none goes stale."""
    if wipe and layout.rendered.is_dir():
        for stale in layout.rendered.glob("*.Dockerfile"):
            stale.unlink()
    for relative, text in outputs.items():
        target = layout.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sorted(outputs)


def drifted(outputs: dict[Path, str], layout: Layout, full: bool) -> list[str]:
    """Files that differ from a fresh render: changed, missing, or (for a full render) left over."""
    problems = []
    for relative, text in outputs.items():
        target = layout.root / relative
        if not target.is_file():
            problems.append(f"{relative} (missing)")
        elif target.read_text(encoding="utf-8") != text:
            problems.append(f"{relative} (differs)")
    if full and layout.rendered.is_dir():
        expected = {layout.root / relative for relative in outputs}
        problems += [
            f"{stale.relative_to(layout.root)} (no matrix entry renders it)"
            for stale in sorted(layout.rendered.glob("*.Dockerfile"))
            if stale not in expected
        ]
    return problems
