"""The image we run in, the verl source in use, and, with no image chosen, the image to pull for this host."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from compat.checks import fail, passed, skip, warn
from compat.matrix import same_version
from compat.rules import rule
from compat.rules.accelerators import PLATFORM_OF_VENDOR, _arch_matches, older


@rule("manifest")
def image_manifest(ctx):
    manifest = ctx.fact("manifest")
    if manifest.data is None:
        yield skip("image", f"not inside a verl image (no manifest at {manifest.path})")
    elif bad := ctx.extra.get("bad_manifest"):
        yield fail(
            "image",
            f"the image manifest {manifest.path} is damaged: {bad}",
            "pull the image again (`docker pull <tag>`); if you built it, rebuild with `verl images build`",
        )
    else:
        data = manifest.data
        yield passed(
            "image",
            f"{data.get('immutable_tag')} (entry {data.get('entry')}, built {data.get('created')} "
            f"from revision {str(data.get('git_revision'))[:12]})",
        )


@rule("verl_source", "manifest")
def verl_source(ctx):
    source = ctx.fact("verl_source")
    if source.location is None:
        yield fail(
            "verl",
            "the verl package cannot be found on sys.path",
            "`pip install --no-deps -e /workspace/verl` for a mounted checkout, or `pip install verl`",
        )
        return
    kind = f"checkout {source.project_dir}" if source.checkout else f"installed copy {source.location}"
    revision = f" at {source.git_revision[:12]}" if source.git_revision else ""
    detail = f"verl {source.version or '(no metadata)'} from {kind}{revision}"
    target = ctx.target
    if target is None or target.source != "manifest":
        yield passed("verl", detail)
        return
    if source.version and target.verl_version and not same_version(source.version, target.verl_version):
        yield warn(
            "verl",
            f"{detail}, but the image was built for verl {target.verl_version}",
            _match_fix(source, target),
            expected=target.verl_version,
            actual=source.version,
        )
    elif source.checkout and source.git_revision and target.git_revision and source.git_revision != target.git_revision:
        yield warn(
            "verl",
            f"{detail}, but the image was built from revision {target.git_revision[:12]}",
            _match_fix(source, target),
            expected=target.git_revision[:12],
            actual=source.git_revision[:12],
        )
    else:
        yield passed("verl", f"{detail}, matching the image")


def _match_fix(source, target) -> str:
    where = source.project_dir or "/workspace/verl"
    back = (
        f"`git -C {where} checkout {target.git_revision[:12]}` to match the image, or " if target.git_revision else ""
    )
    return (
        f"{back}pull an image built from your revision; if your change needs other package versions, "
        f"build a custom image (`verl images build`)"
    )


def _newest_first(resolved) -> tuple:
    try:
        engine = Version(resolved.engine.version)
    except InvalidVersion:
        engine = Version("0")
    return (not resolved.aliases, -engine.major, -engine.minor, -engine.micro)


@rule("nvidia", "amd", "ascend")
def recommended_image(ctx):
    if ctx.target is not None:
        return
    if ctx.matrix is None:
        yield skip("recommend", f"no image recommended: {ctx.matrix_note}")
        return
    found = [ctx.fact(v) for v in ("nvidia", "amd", "ascend") if ctx.fact(v).present]
    report = found[0] if found else None
    platform = PLATFORM_OF_VENDOR[report.vendor] if report else "cpu"
    rules = ctx.matrix.rules
    fitting, blocked = [], []
    for resolved in ctx.matrix.resolved.values():
        if resolved.platform.kind != platform:
            continue
        if report and not all(_arch_matches(report.vendor, d.arch, resolved.image.gpu_archs) for d in report.devices):
            blocked.append(f"{resolved.name}: not built for {', '.join(sorted({d.arch for d in report.devices}))}")
            continue
        needed = rules.min_driver_for(resolved.platform.cuda) if platform == "cuda" else None
        if needed and report.driver_version and older(report.driver_version, needed):
            blocked.append(f"{resolved.name}: needs driver >= {needed}")
            continue
        fitting.append(resolved)
    hardware = f"{len(report.devices)} x {report.devices[0].name}" if report else "no GPU"
    if not fitting:
        yield warn(
            "recommend",
            f"no image in the matrix fits this host ({hardware}): {'; '.join(blocked) or 'none for ' + platform}",
            "upgrade the driver as listed, or add an entry for this hardware to matrix.yaml and build it "
            "(`verl images build`)",
        )
        return
    best = sorted(fitting, key=_newest_first)[0]
    tag = best.aliases[0] if best.aliases else best.immutable_tag
    others = [r.aliases[0] for r in fitting if r is not best and r.aliases]
    also = f"; also fits: {', '.join(others)}" if others else ""
    yield passed("recommend", f"for this host ({hardware}): docker pull {best.reference(tag)}{also}")
