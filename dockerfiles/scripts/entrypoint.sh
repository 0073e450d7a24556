#!/usr/bin/env bash
# Image entrypoint: prepare the accelerator environment, then run the command (default: bash).
set -euo pipefail

# Ascend: CANN's libraries and tools are found only after its set_env.sh scripts are sourced.
for env_script in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/nnal/atb/set_env.sh; do
    if [[ -f "${env_script}" ]]; then
        set +u
        # shellcheck disable=SC1090
        source "${env_script}"
        set -u
    fi
done

exec "$@"
