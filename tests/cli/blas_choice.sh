#!/usr/bin/env bash
# The OpenBLAS kernel choice of liftlab-cli end to end (issue 30): a core LiftLab asks for is
# self-checked in the re-executed process and recorded in spec.json; against a deliberately wrong
# reference the check fails and the run falls back to the core OpenBLAS detected; an
# OPENBLAS_CORETYPE from the environment is never overridden.
# usage: blas_choice.sh LIFTLAB_CLI WORKDIR
set -euo pipefail
cli=$1 work=$2
py=/usr/bin/python3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
field() {  # field RUN_DIR KEY: versions.KEY or versions.blas_choice.KEY of spec.json
  "$py" -c "import json,sys; v=json.load(open(sys.argv[1]+'/spec.json'))['versions']
print(v.get(sys.argv[2], v['blas_choice'].get(sys.argv[2], '')))" "$1" "$2"
}
run() { "$@" "$cli" run cf-regression --steps 5 --set log_every=5 --out runs 2>/dev/null; }

# What OpenBLAS picks here by itself.
detected=$(env -u OPENBLAS_CORETYPE -u LIFTLAB_BLAS_CORETYPE "$py" -c \
  'import ctypes; f=ctypes.CDLL("libblas.so.3").openblas_get_corename; f.restype=ctypes.c_char_p; print(f().decode())')
[ -n "$detected" ] || { echo "not OpenBLAS: nothing to check"; exit 0; }

# 1. The environment's choice stands.
dir=$(run env OPENBLAS_CORETYPE=Prescott)
[ "$(field "$dir" source)" = environment ] || fail "OPENBLAS_CORETYPE from the environment: source $(field "$dir" source)"
[ "$(field "$dir" blas_core)" = Prescott ] || fail "OPENBLAS_CORETYPE=Prescott was not kept: $(field "$dir" blas_core)"

# 2. A core LiftLab asks for (Prescott: every x86-64 runs it) after a passed self-check.
dir=$(run env -u OPENBLAS_CORETYPE LIFTLAB_BLAS_CORETYPE=Prescott)
[ "$(field "$dir" source)" = liftlab ] || fail "asked-for core: source $(field "$dir" source)"
[ "$(field "$dir" blas_core)" = Prescott ] || fail "asked-for core not used: $(field "$dir" blas_core)"
case "$(field "$dir" self_check)" in passed:*) ;; *) fail "self-check: $(field "$dir" self_check)";; esac
[ "$(field "$dir" detected)" = "$detected" ] || fail "detected $(field "$dir" detected), expected $detected"

# 3. Against a wrong reference the check fails: back to the detected core, recorded.
dir=$(run env -u OPENBLAS_CORETYPE LIFTLAB_BLAS_CORETYPE=Prescott LIFTLAB_BLAS_SELF_CHECK=wrong-reference)
[ "$(field "$dir" source)" = liftlab-fallback ] || fail "wrong reference: source $(field "$dir" source)"
[ "$(field "$dir" blas_core)" = "$detected" ] || fail "fallback runs on $(field "$dir" blas_core), not $detected"
case "$(field "$dir" self_check)" in "failed: dgemm"*) ;; *) fail "self-check: $(field "$dir" self_check)";; esac
echo ok
