#!/usr/bin/env bash
# "Bring your own model" end to end (docs/your-model.md): liftlab-cli trains the example
# TorchScript models of resources/models/, the exported models round-trip through torch.jit.load in Debian's
# python3-torch (tests/cli/check_export.py), the spec records the file's SHA-256 and repeats the
# run, and bad files exit 2 naming the file, with no run folder.
# usage: byo_model.sh SCENARIO LIFTLAB_CLI WORKDIR
set -euo pipefail
scenario=$1 cli=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
models=$(cd "$here/../../resources/models" && pwd)
py=/usr/bin/python3
rm -rf "$work" && mkdir -p "$work" && cd "$work"

fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }
final() {  # final METRIC LABEL RUN_DIR
  "$py" -c "import json,sys; d=json.load(open(sys.argv[3]+'/summary.json'));
print([r for r in d['runs'] if r['method']==sys.argv[2]][0]['final'][sys.argv[1]])" "$@"
}

case "$scenario" in
backbone)
  dir=$("$cli" run cf-regression --out runs --steps 60 --set log_every=20 \
        --set backbone.kind=torchscript --set backbone.script="$models/mlp_backbone.pt")
  "$py" "$here/check_export.py" "$dir" 4 || fail "exported models do not give the logged metrics"
  want=$(sha256sum "$models/mlp_backbone.pt" | cut -d' ' -f1)
  got=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['backbone']['script_sha256'])" "$dir/spec.json")
  [ "$want" = "$got" ] || fail "spec.json records SHA-256 $got, the file has $want"
  # The recorded spec repeats the run: the same final metrics.
  again=$("$cli" run "$dir/spec.json" --out runs2)
  for m in adam cf-prox; do
    [ "$(final test_loss $m "$dir")" = "$(final test_loss $m "$again")" ] || fail "$m: repeat differs"
  done
  ;;
icnn)
  dir=$("$cli" run icnn-ebm-1d --out runs --steps 40 --seeds 1 --set log_every=20 \
        --set task.n_train=2048 --set task.n_test=512 \
        --set icnn.script="$models/icnn_1d.pt" --set 'icnn.constrained_regex=wz[0-9]+|w_out')
  "$py" "$here/check_export.py" "$dir" 3 || fail "exported ICNNs do not give the logged metrics"
  for m in lifter softplus pgd; do
    v=$(final chord_convexity_violations $m "$dir")
    [ "$v" = "0.0" ] || fail "$m: $v of the chords violate convexity"
  done
  ;;
bad_files)
  expect() {  # expect PATTERN ARGS...: exit 2, stderr matches, no run folder
    local pattern=$1 rc
    shift
    set +e
    timeout 120 "$cli" run "$@" --out runs >out.txt 2>err.txt
    rc=$?
    set -e
    [ $rc -eq 2 ] || fail "exit $rc, expected 2: $* ; $(tail -c 400 err.txt)"
    grep -Eq -- "$pattern" err.txt || fail "message does not match '$pattern': $(cat err.txt)"
    [ ! -e runs ] || fail "a run folder was written for: $*"
  }
  # TorchScript compiles from source files, so the generator is a file, not standard input.
  cat >make_bad.py <<'PY'
import torch
from torch import nn
class NoParams(nn.Module):
    def forward(self, x):
        return x
class Throws(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
    def forward(self, x):
        if x.dim() != 4:
            raise RuntimeError("this model takes images")
        return x
torch.jit.script(NoParams()).save("no_params.pt")
torch.jit.script(Throws()).save("throws.pt")
torch.save(nn.Linear(16, 8), "pickled.pt")   # torch.save of a module: not TorchScript
torch.save(nn.Linear(16, 8).state_dict(), "state_dict.pt")
PY
  "$py" make_bad.py
  echo "not a model" >text.pt
  bb=(cf-regression --steps 5 --set backbone.kind=torchscript)
  expect "backbone.script.*text.pt: not a TorchScript archive" "${bb[@]}" --set backbone.script=text.pt
  expect "backbone.script.*pickled.pt: not a TorchScript archive .it looks like a torch.save.. file" "${bb[@]}" --set backbone.script=pickled.pt
  expect "backbone.script.*state_dict.pt: not a TorchScript archive .it looks like a torch.save.. file" "${bb[@]}" --set backbone.script=state_dict.pt
  expect "backbone.script.*no_params.pt.*no parameters" "${bb[@]}" --set backbone.script=no_params.pt
  expect "backbone.script.*throws.pt.*this model takes images" "${bb[@]}" --set backbone.script=throws.pt
  expect "backbone.script.*cnn_backbone.pt.*4 × 16" "${bb[@]}" --set backbone.script="$models/cnn_backbone.pt"
  expect "backbone.script.*missing.pt.*cannot open" "${bb[@]}" --set backbone.script=missing.pt
  expect "backbone.script'.*is required" "${bb[@]}"
  expect "backbone.script_sha256.*the file changed" "${bb[@]}" --set backbone.script="$models/mlp_backbone.pt" \
    --set backbone.script_sha256=0000000000000000000000000000000000000000000000000000000000000000
  ic=(icnn-ebm-1d --steps 5 --seeds 1)
  expect "icnn.constrained.*name the non-negative parameters" "${ic[@]}" --set icnn.script="$models/icnn_1d.pt"
  expect "icnn.constrained.*no parameter 'wz3'" "${ic[@]}" --set icnn.script="$models/icnn_1d.pt" \
    --set 'icnn.constrained=["wz1","wz3"]'
  expect "icnn.script.*icnn_2d.pt.*forward failed" "${ic[@]}" --set icnn.script="$models/icnn_2d.pt" \
    --set 'icnn.constrained_regex=wz.*|w_out'
  expect "icnn.script.*mlp_backbone.pt.*one energy per row" "${ic[@]}" --set icnn.script="$models/mlp_backbone.pt" \
    --set 'icnn.constrained_regex=layer2.*' --set task.kind=icnn-ebm-nd --set task.target=gaussian --set task.dim=16
  ;;
*)
  fail "unknown scenario"
  ;;
esac
echo "ok [$scenario]"
