#!/usr/bin/env bash
# Configures and builds LiftLab with a CMake preset (default: dev). Extra arguments are targets.
# usage: scripts/build.sh [PRESET] [TARGET ...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
shift || true
if [ ! -f "build/$preset/CMakeCache.txt" ]; then
  cmake --preset "$preset" >/dev/null
fi
if [ $# -gt 0 ]; then
  cmake --build --preset "$preset" --target "$@"
else
  cmake --build --preset "$preset"
fi
