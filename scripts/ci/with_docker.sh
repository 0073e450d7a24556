#!/usr/bin/env bash
# Run a command with a private Docker engine and the locally made base image, then stop the engine.
#   usage: sudo bash scripts/ci/with_docker.sh .venv/bin/python -m pytest -q -m image
# For machines without a registry (CI, air-gapped): installs docker.io + debootstrap if missing, starts dockerd
# (scripts/ci/docker_engine.sh), makes the CPU image's base locally (scripts/ci/make_base_image.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }

# shellcheck source=scripts/ci/docker_engine.sh
source scripts/ci/docker_engine.sh
docker_engine_install
trap docker_engine_stop EXIT
docker_engine_start
scripts/ci/make_base_image.sh "$("${PYTHON:-.venv/bin/python}" scripts/ci/base_image_of.py cpu)"
"$@"
