"""Python packages: equal to the image's pins, inside verl's supported ranges, free of known-bad combinations."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from compat.checks import fail, passed, skip, warn
from compat.matrix import in_range, is_version, same_version
from compat.rules import rule
from compat.units import plural


def _image_choices(matrix, dist: str) -> list[str]:
    """Tags of images that ship `dist` at a version the framework supports, to suggest as a remedy."""
    spec = matrix.rules.framework.get(dist)
    tags = []
    for resolved in matrix.resolved.values():
        version = resolved.versions.get(dist)
        if version and (spec is None or in_range(version, spec)):
            tags.append(resolved.aliases[0] if resolved.aliases else resolved.immutable_tag)
    return tags


def _coupled_to_torch(ctx, dist: str) -> bool:
    """Packages whose wrong version breaks at import or run time: torch, the engine and what either pins exactly."""
    if canonicalize_name(dist) == "torch":
        return True
    resolved = ctx.matrix.resolved.get(ctx.target.name) if ctx.matrix and ctx.target else None
    if resolved is None:  # an image the matrix no longer lists: only torch is known to be coupled
        return False
    coupled = {resolved.engine.package, *resolved.engine.requires, *resolved.image.build_from_source}
    return canonicalize_name(dist) in {canonicalize_name(d) for d in coupled}


@rule("packages")
def package_versions(ctx):
    """The versions of every package the matrix pins anywhere (read from metadata, nothing imported)."""
    if ctx.host_only or ctx.matrix is None:
        return
    installed = ctx.fact("packages")
    known = dict.fromkeys(name for r in ctx.matrix.resolved.values() for name in r.versions)
    known.update(dict.fromkeys(ctx.matrix.rules.framework))
    present = [f"{name} {installed.get(name)}" for name in known if installed.get(name)]
    absent = sum(1 for name in known if not installed.get(name))
    others = f"; {plural(absent, 'other package')} of the matrix not installed" if absent else ""
    yield passed("packages", ", ".join(present) + others)


@rule("packages", "manifest")
def pinned_versions(ctx):
    target = ctx.target
    if target is None:
        return
    if ctx.host_only:
        yield skip(
            "pins",
            f"{len(target.pins)} pins of image {target.tag} are checked inside the image "
            "(run `verl doctor` there); the image brings its own packages",
        )
        return
    installed = ctx.fact("packages")
    matching = 0
    for dist, pinned in target.pins.items():
        have = installed.get(dist)
        level = fail if _coupled_to_torch(ctx, dist) else warn
        if have is None:
            yield level(
                f"pin:{dist}",
                f"{dist} is not installed; image {target.tag} pins {pinned}",
                f"`pip install '{dist}=={pinned}'`",
                expected=pinned,
                actual="not installed",
            )
        elif not same_version(have, pinned):
            yield level(
                f"pin:{dist}",
                f"{dist} {have} is installed; image {target.tag} was built with {pinned}",
                f"`pip install '{dist}=={pinned}'` (or rebuild the image with the version you need)",
                expected=pinned,
                actual=have,
            )
        else:
            matching += 1
    if matching:
        yield passed("pins", f"{plural(matching, 'package')} match image {target.tag} exactly")


@rule("packages")
def supported_ranges(ctx):
    if ctx.host_only:
        return  # the matrix loader already holds every image to these ranges
    if ctx.matrix is None:
        yield skip("supported", f"framework ranges not checked: {ctx.matrix_note}")
        return
    installed = ctx.fact("packages")
    engines = {e.package for e in ctx.matrix.engines.values()}
    for dist, spec in ctx.matrix.rules.framework.items():
        have = installed.get(dist)
        if have is None:
            continue
        if not is_version(have):
            yield warn(
                f"supported:{dist}",
                f"{dist} reports version {have!r}, which is not a version",
                f"reinstall it: `pip install --force-reinstall '{dist}{spec}'`",
            )
        elif in_range(have, spec):
            yield passed(f"supported:{dist}", f"{dist} {have} is within verl's supported range {spec}")
        else:
            images = _image_choices(ctx.matrix, dist)
            pull = f", or use image {', '.join(images[:3])}" if images else ""
            yield fail(
                f"supported:{dist}",
                f"{dist} {have} is outside the range verl {ctx.matrix.verl_version} supports ({spec})",
                f"`pip install '{dist}{spec}'`{pull}",
                expected=spec,
                actual=have,
            )
    if not any(installed.get(e) for e in engines):
        yield skip("engine", f"no rollout engine installed ({', '.join(sorted(engines))}): rollouts use HF generate")


def component_versions(ctx) -> dict[str, str | None]:
    """Everything a known-bad rule may name: packages, accelerator parts (cuda, cudnn, ...), driver, python."""
    target = ctx.target
    if ctx.host_only:
        versions = dict(target.rule_versions)  # judging an image from outside: its contents count, not ours
    else:
        versions = {**(target.accelerator if target else {}), **ctx.fact("packages").versions}
        stack = ctx.fact("cuda_stack")
        found = {
            "cuda": stack.cuda_runtime,
            "cudnn": stack.cudnn,
            "nccl": stack.nccl,
            "rocm": ctx.fact("amd").stack_version,
            "cann": ctx.fact("ascend").stack_version,
            "python": ctx.fact("host").python,
        }
        versions.update({part: version for part, version in found.items() if version})
    drivers = (ctx.fact(vendor).driver_version for vendor in ("nvidia", "amd", "ascend"))
    versions["driver"] = next((d for d in drivers if d), None)
    return {canonicalize_name(k): v for k, v in versions.items()}  # "cuda", "driver" are unchanged by this


@rule("packages", "cuda_stack", "manifest", "nvidia", "amd", "ascend", "host")
def known_bad(ctx):
    if ctx.matrix is None:
        yield skip("known-bad", f"known-bad combinations not checked: {ctx.matrix_note}")
        return
    versions = component_versions(ctx)
    hits = []
    for bad in ctx.matrix.rules.known_bad:
        relevant = {k: versions.get(canonicalize_name(k)) for k in bad.when}
        if bad.matches(relevant):
            hits.append((bad, relevant))
    for bad, relevant in hits:
        found = ", ".join(f"{k} {v}" for k, v in relevant.items())
        yield fail(
            f"known-bad:{bad.id}",
            f"{found}: {bad.reason}",
            bad.fix,
            expected="not " + ", ".join(f"{k}{s}" for k, s in bad.when.items()),
            actual=found,
        )
    if not hits:
        yield passed(
            "known-bad", f"none of the {plural(len(ctx.matrix.rules.known_bad), 'known-bad combination')} applies"
        )


@rule("packages")
def shadowed_installs(ctx):
    for dist, hidden in ctx.fact("packages").shadowed.items():
        used = ctx.fact("packages").get(dist)
        yield warn(
            f"duplicate:{dist}",
            f"{dist} is installed more than once: {used} is imported, {', '.join(hidden)} also found later on sys.path",
            f"`pip uninstall -y {dist}` until pip finds none, then `pip install '{dist}=={used}'`",
        )
