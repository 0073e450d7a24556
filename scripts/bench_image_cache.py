"""Layer caching of an image build: a cold build against a rebuild after a source-only change.

    usage: python scripts/bench_image_cache.py [--entry cpu] [--keep]

Works on a temporary copy of this checkout (the real tree is never touched):
  1. cold build: `verl images build ENTRY --no-cache` (pip's download cache mount stays warm: the network is not
     what is measured, the layers are);
  2. rebuild after appending a comment to verl/__init__.py: dependencies sit before the source in the
     Dockerfile, so only the last layers may run again.
Prints both times and their ratio (goal: at most 10%), the image's size, and whether the final stage carries
a compiler, a pip cache or apt lists (it must carry none). Needs a Docker engine (scripts/ci/with_docker.sh).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO_ROOT / "scripts" / "ci"), str(REPO_ROOT / "tests" / "docker"), str(REPO_ROOT)]

import docker  # noqa: E402

from checkout_copy import copy_checkout  # noqa: E402
from compat.matrix import MatrixError, load_matrix  # noqa: E402
from image_hygiene import leftovers  # noqa: E402
from local_build import BuildFailed, build_args, run_verl  # noqa: E402

GOAL = 0.10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entry", default="cpu", help="matrix entry to build (default: cpu)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary checkout and build logs")
    opts = parser.parse_args()

    try:
        load_matrix(REPO_ROOT / "matrix.yaml").resolve(opts.entry)  # a wrong entry fails here, before any build
        client = docker.from_env(timeout=600)
        client.ping()
    except MatrixError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except docker.errors.DockerException as exc:
        print(f"error: no Docker engine answers ({exc}); run under scripts/ci/with_docker.sh", file=sys.stderr)
        return 2
    reference = f"verl-bench/cache:{opts.entry}"  # its own tag: the matrix's tags stay on the real builds
    work = Path(tempfile.mkdtemp(prefix="verl-bench-cache-"))
    try:
        tree = copy_checkout(work / "verl")
        cold = run_verl(build_args(opts.entry, "--tag", reference, "--no-cache"), work / "cold.log", cwd=tree)
        source = tree / "verl" / "__init__.py"
        source.write_text(source.read_text() + "\n# touched by scripts/bench_image_cache.py\n")
        warm = run_verl(build_args(opts.entry, "--tag", reference), work / "rebuild.log", cwd=tree)
    except BuildFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if opts.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    size = client.images.get(reference).attrs["Size"]
    found = leftovers(client, reference)
    ratio = warm / cold
    print(f"\nimage {reference}")
    print(f"cold build (--no-cache):           {cold:7.1f} s")
    print(f"rebuild after touching verl/:      {warm:7.1f} s")
    print(f"ratio rebuild / cold:              {ratio:7.1%}   (goal <= {GOAL:.0%}: {'met' if ratio <= GOAL else 'NOT met'})")
    print(f"image size:                        {size / 2**30:7.2f} GiB ({size} bytes)")
    print(f"final stage leftovers:             {'none' if not found else '; '.join(found)}")
    return 0 if ratio <= GOAL and not found else 1


if __name__ == "__main__":
    sys.exit(main())
