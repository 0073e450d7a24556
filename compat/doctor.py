"""Run every probe, then every rule, and collect the verdicts into a Report. Never raises for a broken machine:
only a usage problem (an unknown --image, an unreadable --matrix) raises, as UsageProblem."""

from __future__ import annotations

import os
import time
from pathlib import Path

import compat.probes
from compat.checks import Check, warn
from compat.context import Context
from compat.matrix import Matrix, MatrixError, default_matrix_path, load_matrix
from compat.probes.image import manifest_path
from compat.probing import Outcome, Probe, RunningProbes
from compat.report import Report
from compat.rules import load_rules
from compat.target import BadManifest, choose_target


class UsageProblem(Exception):
    """The command line asked for something that does not exist; the CLI exits 2 with this message."""


def _load(matrix_path: str | os.PathLike | None) -> tuple[Matrix | None, str | None, Check | None]:
    """(matrix, why-there-is-none, check-for-a-broken-default). An explicit path must load or it is a usage error."""
    if matrix_path is not None:
        try:
            return load_matrix(matrix_path), None, None
        except MatrixError as exc:
            raise UsageProblem(str(exc)) from None
    path = default_matrix_path()
    if not path.is_file():
        return None, f"no version matrix at {path} (pass --matrix)", None
    try:
        return load_matrix(path), None, None
    except MatrixError as exc:
        note = f"the version matrix is invalid: {exc}"
        return None, note, warn("matrix", note, "fix the file as the message says, or pass --matrix PATH")


def _probe_failure(probe: Probe, outcome: Outcome) -> Check:
    what = "hung" if outcome.timed_out else "failed"
    return warn(
        probe.name, f"the {probe.name} probe {what}: {outcome.error}; the checks that need it were skipped", probe.fix
    )


def _describe(target, image: str | None) -> str:
    if target is None:
        return "no image: this machine as it is"
    how = "named with --image" if image is not None else "this container's manifest"
    return f"image {target.tag}, {how}"


def run_doctor(image: str | None = None, matrix_path: str | os.PathLike | None = None) -> Report:
    start = time.monotonic()
    probes = list(compat.probes.PROBES)  # read at call time, so tests can swap probes
    if image is not None and not Path(manifest_path()).exists():
        probes = [p for p in probes if not p.python_env]  # the image brings its own packages: no imports here
    if matrix_path is not None or image is not None:
        # Usage errors first: no probe (nor its child processes) should outlive a mistyped option.
        matrix, matrix_note, matrix_check = _load(matrix_path)
        if image is not None and matrix is None:
            raise UsageProblem(f"--image needs the version matrix: {matrix_note}")
        running = RunningProbes(probes)
    else:
        running = RunningProbes(probes)  # the probes wait on drivers and children while the matrix loads
        matrix, matrix_note, matrix_check = _load(None)
    outcomes = running.collect()
    checks = [_probe_failure(p, outcomes[p.name]) for p in probes if not outcomes[p.name].ok]
    if matrix_check:
        checks.append(matrix_check)

    manifest = outcomes["manifest"].value.data if outcomes["manifest"].ok else None
    extra = {}
    try:
        target = choose_target(image, matrix, manifest)
    except MatrixError as exc:  # only --image can miss: say it about the option, not about the file
        raise UsageProblem(f"--image: {exc.message}" + (f" (allowed: {exc.allowed})" if exc.allowed else "")) from None
    except BadManifest as exc:
        target, extra["bad_manifest"] = None, str(exc)

    ctx = Context(
        facts=outcomes,
        matrix=matrix,
        target=target,
        matrix_note=matrix_note,
        inside_image=manifest is not None,
        extra=extra,
    )
    for rule in load_rules():
        if any(not outcomes[need].ok for need in rule.needs if need in outcomes):
            continue  # the probe's own WARN already explains what could not be checked
        try:
            checks.extend(rule.func(ctx))
        except Exception as exc:  # noqa: BLE001 - a bug in one rule must not hide the other verdicts
            checks.append(
                warn(
                    rule.name,
                    f"this check crashed: {type(exc).__name__}: {exc}",
                    "report it with the output of `verl doctor --json --verbose`",
                )
            )
    return Report(
        checks=checks,
        target=_describe(target, image),
        elapsed_s=time.monotonic() - start,
        probe_times={name: o.elapsed_s for name, o in outcomes.items()},
    )
