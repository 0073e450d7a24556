"""Print the base image an image entry builds FROM, as matrix.yaml names it.

    usage: python scripts/ci/base_image_of.py ENTRY      (ENTRY: entry name, alias or immutable tag)

CI makes that image locally (scripts/ci/make_base_image.sh) because no registry is reachable.
"""

from __future__ import annotations

import sys

from compat.matrix import MatrixError, load_matrix


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        resolved = load_matrix().resolve(argv[0])
    except MatrixError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(resolved.platform.runtime_image or resolved.platform.base_image)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
