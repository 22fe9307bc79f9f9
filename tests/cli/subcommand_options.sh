#!/usr/bin/env bash
# liftlab-cli's options per subcommand (issue 38): an option of another subcommand, or of none,
# is a usage error (exit 2) naming the option and the subcommand, before anything runs; each
# subcommand's --help lists its own options. Nothing here trains: about 20 starts of liftlab-cli.
# usage: subcommand_options.sh LIFTLAB_CLI WORKDIR
set -euo pipefail
cli=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"

fail() { echo "FAIL [subcommand_options]: $*" >&2; exit 1; }
expect() {  # expect EXIT_CODE MESSAGE_PART... -- ARGS...: the exit code and every part on stderr
  local code=$1 rc parts=()
  shift
  while [ "$1" != -- ]; do parts+=("$1"); shift; done
  shift
  set +e
  "$cli" "$@" >out.txt 2>err.txt; rc=$?
  set -e
  [ $rc -eq "$code" ] || fail "'$*': exit $rc, expected $code: $(cat err.txt)"
  for part in "${parts[@]}"; do
    grep -qF -- "$part" err.txt || fail "'$*': message lacks '$part': $(head -3 err.txt)"
  done
}

# An option of another subcommand names both subcommands.
expect 2 "--grid is not an option of 'run'" "(it is one of: landscape)" -- run cf-regression --grid 5
expect 2 "--grid is not an option of 'run'" -- --grid 5 run cf-regression
expect 2 "--steps is not an option of 'report'" "(it is one of: run)" -- report somewhere --steps 5
expect 2 "--methods is not an option of 'landscape'" -- landscape somewhere --methods adam
expect 2 "--format is not an option of 'merge'" "report" -- merge a b --format svg
expect 2 "--set is not an option of 'claims'" -- claims --tier tiny --set steps=3
expect 2 "--tier is not an option of 'run'" "(it is one of: claims)" -- run cf-regression --tier tiny
expect 2 "--out is not an option of 'list'" "(it is one of: run, merge, claims)" -- list --out x
expect 2 "--out is not an option of 'report'" -- report somewhere --out x
expect 2 "--resume is not an option of 'landscape'" "run, claims" -- landscape somewhere --resume x
# An option of none.
expect 2 "--nonsense is not an option of 'run'" "liftlab-cli run --help" -- run cf-regression --nonsense
expect 2 "-x is not an option of 'report'" -- report somewhere -x
# The error shows the subcommand's synopsis, not the others'.
expect 2 "liftlab-cli report RUN_DIR" -- report somewhere --grid 3
! grep -q "liftlab-cli landscape RUN_DIR" err.txt || fail "report's error shows landscape's synopsis"
# A missing value, an unknown subcommand, no subcommand.
expect 2 "Missing value after '--steps'" -- run cf-regression --steps
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "usage:" -- --out x
[ ! -d runs ] || fail "a refused command wrote runs/: $(ls runs)"
[ ! -d x ] || fail "a refused command wrote x/"

# Help: the whole synopsis, and each subcommand's own options.
"$cli" --help >help.txt || fail "--help exited non-zero"
for s in list run merge claims report landscape; do
  grep -q "liftlab-cli $s" help.txt || fail "--help lacks $s"
done
"$cli" run --help >run_help.txt || fail "run --help exited non-zero"
grep -q -- "--probe-timeout S" run_help.txt || fail "run --help lacks --probe-timeout"
grep -q -- "--out DIR .*(default: runs)" run_help.txt || fail "run --help lacks --out's default"
! grep -q -- "--grid" run_help.txt || fail "run --help lists --grid"
"$cli" landscape --help >landscape_help.txt || fail "landscape --help exited non-zero"
grep -q -- "--grid N" landscape_help.txt || fail "landscape --help lacks --grid"
! grep -q -- "--seeds" landscape_help.txt || fail "landscape --help lists --seeds"
"$cli" list >list.txt || fail "list exited non-zero"
grep -q "^cf-regression " list.txt || fail "list lacks cf-regression"
echo "ok [subcommand_options]"
