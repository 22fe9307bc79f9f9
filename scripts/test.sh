#!/usr/bin/env bash
# Installs what is missing, builds everything with the dev preset and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh dev
export QT_QPA_PLATFORM=offscreen
# LibTorch's OpenMP threads spin while idle, which starves the other test when two share 2 cores.
export OMP_WAIT_POLICY=PASSIVE
ctest --preset dev
