#!/usr/bin/env bash
# Make (or refresh) the development environment in .venv: the light core, the RL framework and the test tools.
# torch is installed first at an exact CPU pin: an unpinned torch would pull a multi-GB CUDA build,
# and with torch already present the `train` extra's range installs nothing more.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION="${VERL_DEV_TORCH:-2.13.0}"
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==${TORCH_VERSION}"
.venv/bin/python -m pip install -q -e ".[train,gpu,test]"
echo "environment ready: $(pwd)/.venv (torch ${TORCH_VERSION})"
