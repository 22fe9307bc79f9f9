#!/usr/bin/env bash
# `liftlab-cli claims` at the test suite's tiny budget: the table's shape, not its verdicts.
# usage: claims.sh SCENARIO LIFTLAB_CLI WORKDIR
#   shape: every claim of the registry gets a row in claims.csv / claims.json / claims.md, the
#          PDF is written, every row that ran names its run folder and command;
#   options: --only, --reuse, --tune, --resume and bad options.
set -euo pipefail
scenario=$1 cli=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
py=/usr/bin/python3
fail() { echo "FAIL [claims $scenario]: $*" >&2; exit 1; }

case "$scenario" in
shape)
  dir=$("$cli" claims --tier tiny --out out 2>err.txt) || { cat err.txt; fail "claims exited non-zero"; }
  [ -d "$dir" ] || fail "printed path '$dir' is not a folder"
  [ -s "$dir/claims.md" ] || fail "no claims.md"
  [ "$(head -c 4 "$dir/claims.pdf")" = "%PDF" ] || fail "claims.pdf is not a PDF"
  "$py" - "$dir" <<'PY' || fail "claims table has the wrong shape"
import csv, json, os, sys
d = sys.argv[1]
j = json.load(open(os.path.join(d, "claims.json")))
rows = list(csv.DictReader(open(os.path.join(d, "claims.csv"), encoding="utf-8")))
need = ["id", "claim", "paper", "ours", "seeds", "test", "p", "verdict", "seeds_needed", "tier",
        "command"]
assert all(k in rows[0] for k in need), rows[0].keys()
assert [r["id"] for r in rows] == [c["id"] for c in j["claims"]]
assert len(rows) >= 15, len(rows)
assert j["tier"] == "tiny" and j["status"] == "ok"
verdicts = {"holds", "refuted", "inconclusive", "not run"}
for r, c in zip(rows, j["claims"]):
    assert r["verdict"] in verdicts, r
    if r["verdict"] == "not run":
        continue
    assert r["command"].startswith("liftlab-cli run "), r["command"]
    assert os.path.isfile(os.path.join(d, c["run_dir"], "summary.json")), c["run_dir"]
    assert r["test"], r
    if r["p"]:
        assert 0 <= float(r["p"]) <= 1
md = open(os.path.join(d, "claims.md"), encoding="utf-8").read()
assert md.count("\n### ") == len(rows)
PY
  grep -q "claims folder:" err.txt || fail "no closing line: $(tail -5 err.txt)"
  ;;
options)
  "$cli" claims --tier tiny --only no-such-claim --out out >/dev/null 2>err.txt && fail "unknown id accepted"
  grep -q "no claim 'no-such-claim'" err.txt || fail "unknown id not named: $(cat err.txt)"
  "$cli" claims --tier medium --out out >/dev/null 2>err.txt && fail "unknown tier accepted"
  "$cli" claims --tier tiny --steps 5 --out out >/dev/null 2>err.txt && fail "--steps accepted"
  "$cli" claims --tier tiny --reuse escape --out out >/dev/null 2>err.txt && fail "bad --reuse accepted"
  # Two claims, the first tuned at the tiny budget.
  dir=$("$cli" claims --tier tiny --only cf-prox-matches-adam,escape --tune --out out 2>err.txt) \
    || { cat err.txt; fail "claims --only --tune failed"; }
  "$py" - "$dir" <<'PY' || fail "--only / --tune rows wrong"
import json, os, sys
j = json.load(open(os.path.join(sys.argv[1], "claims.json")))
ids = [c["id"] for c in j["claims"]]
assert ids == ["cf-prox-matches-adam", "escape"], ids
c = j["claims"][0]
assert c["tuned"] and c["best_settings"] and len(c["tuning_scores"]) == 8, c
assert c["best"]["verdict"] in ("holds", "refuted", "inconclusive")
assert not j["claims"][1]["tuned"]
PY
  # --reuse reads another folder's run instead of running; --resume reruns nothing.
  run=$("$py" -c 'import json,os,sys; d=sys.argv[1]; print(os.path.join(d, json.load(open(os.path.join(d,"claims.json")))["claims"][1]["run_dir"]))' "$dir")
  again=$("$cli" claims --tier tiny --only escape --reuse "escape=$run" --out out 2>err2.txt) \
    || { cat err2.txt; fail "--reuse failed"; }
  [ -z "$(ls "$again/runs" 2>/dev/null)" ] || fail "--reuse ran something: $(ls "$again/runs")"
  "$cli" claims --resume "$dir" >/dev/null 2>err3.txt || { cat err3.txt; fail "--resume failed"; }
  grep -q "finished earlier" err3.txt || fail "--resume ran its sub-runs again: $(cat err3.txt)"
  # scripts/claims-table.py over both folders: one row per claim, the tuned claim's verdict at its
  # best beside the preset's, the escape row (a later run of it) from the --reuse folder.
  table=$(dirname "$0")/../../scripts/claims-table.py
  "$py" "$table" "$dir" "$again" > table.md || fail "claims-table.py failed"
  "$py" "$table" --brief "$dir" "$again" > brief.md || fail "claims-table.py --brief failed"
  # --into splices the table between its markers and leaves the rest of the file alone.
  printf 'head\n<!-- claims-table brief begin -->\nold\n<!-- claims-table brief end -->\ntail\n' > doc.md
  "$py" "$table" --brief --into doc.md "$dir" "$again" || fail "claims-table.py --into failed"
  [ "$(head -2 doc.md)" = "head
<!-- claims-table brief begin -->" ] && [ "$(tail -2 doc.md)" = "<!-- claims-table brief end -->
tail" ] || fail "--into did not keep the file around the markers: $(cat doc.md)"
  diff <(sed '1,2d;$d' doc.md | sed '$d') brief.md || fail "--into wrote another table than --brief prints"
  "$py" "$table" --into doc.md "$dir" 2>/dev/null && fail "--into accepted a file without its markers"
  "$py" - table.md brief.md "$again" <<'PY' || fail "claims-table.py rows wrong: $(cat table.md)"
import os, sys
for path, columns in ((sys.argv[1], 10), (sys.argv[2], 4)):
    rows = [l for l in open(path, encoding="utf-8") if l.startswith("| `")]
    assert len(rows) == 2, rows
    cells = [[x.strip() for x in r.strip().strip("|").split(" | ")] for r in rows]
    assert all(len(c) == columns for c in cells), cells
    adam, escape = cells
    assert adam[0].startswith("`cf-prox-matches-adam`") and escape[0].startswith("`escape`")
    if columns == 10:  # the full table ends with the command that re-makes the row
        assert adam[-1].startswith("`liftlab-cli run cf-batch-sweep"), adam
        adam, escape = adam[:-1], escape[:-1]
        assert "steps" in adam[4], adam  # the time to the target loss
    assert adam[-1] != "–" and ", p = " in adam[-1], adam
    assert escape[-1] == "–", escape
text = open(sys.argv[1], encoding="utf-8").read()
assert "`" + os.path.basename(sys.argv[3]) + "`" in text
assert text.startswith("0 of 2 claims at the full tier (2 at the tiny tier); a row below the full "
                       "tier ran at the reduced budget docs/cli.md names. Generated by"), text[:160]
PY
  # Every row at the full tier: the header does not speak of a reduced budget.
  mkdir -p allfull/claims-full-20261205-180414
  "$py" - "$dir/claims.json" allfull/claims-full-20261205-180414/claims.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.update(tier="full")
json.dump(j, open(sys.argv[2], "w"))
PY
  "$py" "$table" --brief allfull/claims-full-20261205-180414 > allfull.md \
    || fail "claims-table.py on a full-tier folder failed"
  [ "$(head -1 allfull.md)" = "2 of 2 claims at the full tier. Generated by \`scripts/claims-table.py\` from: \`claims-full-20261205-180414\`." ] \
    || fail "the header of an all-full table: $(head -1 allfull.md)"
  # A full-tier check still running a claim (no row yet) is named on that claim's row.
  mkdir -p running/claims-full-20261205-145828
  "$py" - "$again/claims.json" running/claims-full-20261205-145828/claims.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.update(status="running", tier="full", claims=[], options=dict(j["options"], only=["escape"]))
json.dump(j, open(sys.argv[2], "w"))
PY
  "$py" "$table" --brief "$dir" "$again" running/claims-full-20261205-145828 > running.md \
    || fail "claims-table.py with a running check failed"
  grep -q "^| \`escape\`.*; full tier running since 2026-12-05 14:58 |" running.md \
    || fail "the running check is not named: $(cat running.md)"
  grep -q "(2 at the tiny tier, 1 of them running at a higher tier)" running.md \
    || fail "the header does not count the running check: $(head -1 running.md)"
  ;;
*) fail "unknown scenario" ;;
esac
echo "ok [claims $scenario]"
