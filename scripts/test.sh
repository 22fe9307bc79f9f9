#!/usr/bin/env bash
# Installs what is missing, builds everything with the dev preset and runs the whole test suite;
# then the sanitizer pass: the asan preset (ASan + UBSan) on the tests that read, parse and write
# (every bad-input case, the readers, the run store, the CLI and window start-up), and a short
# libFuzzer smoke of every reader (scripts/fuzz.sh).
#   LIFTLAB_SANITIZERS=0       skip the sanitizer pass (measured here on a fresh clone: the asan
#                              build ≈ 11 CPU-min, i.e. ≈ 6 min on 2 cores; its tests 120 s; the
#                              fuzz build ≈ 3 CPU-min and 5 × 10 s of fuzzing)
#   LIFTLAB_ASAN_TESTS=REGEX   the ctest -R selection under ASan (".*" for the whole suite)
#   LIFTLAB_FUZZ_SECONDS=N     seconds per fuzz target (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh dev
export QT_QPA_PLATFORM=offscreen
# LibTorch's OpenMP threads spin while idle, which starves the other test when two share 2 cores.
export OMP_WAIT_POLICY=PASSIVE
ctest --preset dev

if [ "${LIFTLAB_SANITIZERS:-1}" = 1 ]; then
  # Training at -O0 under ASan is ~20× slower, so by default the long training tests (every
  # preset, the GUI suites) run in the dev pass only; the input, parsing, writing and start-up
  # paths, where memory errors hide, run under the sanitizers too.
  # Every 4th case of the hostile-input census (≈ 80 CLI starts, ≈ 110 s here) runs there too.
  asan_tests=${LIFTLAB_ASAN_TESTS:-'^bad_input_|^cli_(list|run|bad_spec|killed|interrupted|census|byo_bad_files)$|^gui_autostart_export$|^(BoundedInput|PathComponent|HostileSpec|HostileData|RunStore|RunStoreWrites|ExperimentSpec|CsvRegression|IdxLoader|FashionMnistLoader|CifarBinary|Device|TanhKernel|FastTanh|ReadoutKernel|NdEbmTables|StateArchive|BlasSelfCheck|RunFiles|SpecFields|TorchScriptArchive|TorchScriptArchiveCheck|TorchScriptPickle|TorchScriptCodeCheck|TorchScriptTensorCheck)\.|^TorchScript(Backbone|Icnn)\.BadFiles|^Resume\.Refuses'}
  bash scripts/build.sh asan liftlab-cli liftlab engine_tests
  LIFTLAB_CENSUS_STRIDE=${LIFTLAB_CENSUS_STRIDE:-4} ctest --preset asan -R "$asan_tests"
  bash scripts/fuzz.sh "${LIFTLAB_FUZZ_SECONDS:-10}"
fi
