"""Native extensions imported in a child process: an ABI break is named with the package to rebuild."""

from __future__ import annotations

import re

from compat.checks import fail, passed, skip, warn
from compat.probes.native import NATIVE_MODULES
from compat.rules import RULES, Rule

_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def _reinstall(ctx, dist: str) -> str:
    pinned = ctx.target.pins.get(dist) if ctx.target else None
    return f"{dist}=={pinned}" if pinned else dist


def judge_import(ctx, dist: str, module: str):
    if ctx.host_only:
        return  # this machine's packages are not the image's
    name = f"import:{module}"
    result = ctx.fact(name)
    if not result.installed:
        yield skip(name, f"{dist} is not installed")
        return
    if result.ok:
        yield passed(name, f"{module} imports cleanly ({result.elapsed_s:.1f} s)")
        return
    error = result.error or "unknown error"
    torch = ctx.fact("packages").get("torch") if ctx.facts["packages"].ok else None
    if "undefined symbol" in error:
        yield fail(
            name,
            f"{module} fails to load: {error}",
            f"{dist} was built against another torch than the installed {torch or 'torch'}: "
            f"`pip install --force-reinstall --no-deps --no-build-isolation '{_reinstall(ctx, dist)}'` "
            "built for this torch, or use the image that ships a matching build",
        )
    elif "did not finish" in error:
        yield warn(
            name,
            f"{module}: {error}",
            f"run `python -c 'import {module}'` and watch where it stops (a lock, a network call, a GPU init)",
        )
    elif missing := _MISSING_MODULE.search(error):
        yield fail(
            name,
            f"{module} fails to import: {error}",
            f"install the missing dependency `{missing.group(1).split('.')[0]}`, or reinstall "
            f"`pip install --force-reinstall '{_reinstall(ctx, dist)}'`",
        )
    else:
        yield fail(
            name,
            f"{module} fails to import: {error}",
            f"run `python -c 'import {module}'` for the full traceback; reinstall "
            f"`pip install --force-reinstall '{_reinstall(ctx, dist)}'`",
        )


def _register(dist: str, module: str) -> None:
    def check(ctx):
        return judge_import(ctx, dist, module)

    check.__name__ = f"import_{module}"
    RULES.append(Rule(check, (f"import:{module}",)))


for _dist, _module in NATIVE_MODULES.items():
    _register(_dist, _module)
