#!/usr/bin/env bash
# Benchmarks -> JSON -> PNG charts (perf/plot.py says which). Usage:
#   perf/plot.sh --run     build the perf preset, run the drivers (JSON in build/perf/results/),
#                          draw docs/img/*.png
#   perf/plot.sh           draw again from the JSON already there
#   perf/plot.sh --help    every option
# Installs Debian's python3-matplotlib if it is missing (as scripts/setup installs packages), and
# runs Debian's /usr/bin/python3: a python3 found earlier on PATH (pyenv, a venv) does not see
# the packages apt installs.
set -euo pipefail
cd "$(dirname "$0")/.."

python=/usr/bin/python3
if ! "$python" -c 'import matplotlib' >/dev/null 2>&1; then
    echo "plot: installing python3-matplotlib"
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends python3-matplotlib
fi
exec "$python" perf/plot.py "$@"
