#!/usr/bin/env bash
# Installs what is missing, builds everything with the dev preset and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh dev
export QT_QPA_PLATFORM=offscreen
ctest --preset dev
