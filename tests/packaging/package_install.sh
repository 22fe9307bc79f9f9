#!/usr/bin/env bash
# package_install: `cmake --install` into a temporary prefix gives a LiftLab that works on its own.
#   1. every installed file is in place (programs, presets, models, docs, .desktop, icon, metainfo);
#      the .desktop file and the metainfo pass desktop-file-validate and appstreamcli (when
#      installed: desktop-file-utils and appstream are in scripts/install-deps.sh);
#   2. from a folder outside both trees, and with the source and build trees hidden (a private
#      mount namespace puts an empty tmpfs over them, where `unshare` is allowed; else the check
#      of the model's path below stands alone), the installed liftlab-cli runs cf-linear-probe for
#      two steps: that preset names an example model (resources/models), which must be read from
#      <prefix>/share/liftlab, not from the source tree;
#   3. the installed window opens that run offscreen and saves a screenshot.
# usage: package_install.sh BUILD_DIR SOURCE_DIR APP_ID
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
app_id=$3
fail() {
  echo "package_install: $*" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/liftlab-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$work/" in "$src"/* | "$build"/*) fail "the temporary folder $work is inside a tree it hides" ;; esac
prefix=$work/prefix
t0=$(date +%s.%N)
cmake --install "$build" --prefix "$prefix" --strip >"$work/install.log" 2>&1 ||
  fail "cmake --install failed: $(tail -5 "$work/install.log")"
t1=$(date +%s.%N)

# 1. The installed files.
for f in bin/liftlab bin/liftlab-cli \
  share/liftlab/presets/cf-regression.json share/liftlab/presets/cf-linear-probe.json \
  share/liftlab/models/fmnist_cnn_features.pt share/liftlab/models/icnn_1d.pt \
  share/doc/liftlab/user-guide.md share/doc/liftlab/cli.md share/doc/liftlab/screenshot.png \
  "share/applications/$app_id.desktop" \
  "share/icons/hicolor/scalable/apps/$app_id.svg" \
  "share/metainfo/$app_id.metainfo.xml"; do
  [ -s "$prefix/$f" ] || fail "cmake --install did not put $f in place"
done
for b in liftlab liftlab-cli; do
  [ -x "$prefix/bin/$b" ] || fail "bin/$b is not executable"
  if ldd "$prefix/bin/$b" | grep -q "not found"; then
    fail "bin/$b misses libraries: $(ldd "$prefix/bin/$b" | grep "not found")"
  fi
  # Qt's $ORIGIN run path (qt_standard_project_setup) is relative; none may name a folder.
  runpath=$(readelf -d "$prefix/bin/$b" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
  folders=$(echo "$runpath" | tr ':' '\n' | grep -v '^$ORIGIN' || true)
  [ -z "$folders" ] || fail "bin/$b keeps a run path into a folder: $runpath"
done
grep -q "^Exec=liftlab$" "$prefix/share/applications/$app_id.desktop" || fail "the .desktop file does not start liftlab"
grep -q "^Icon=$app_id$" "$prefix/share/applications/$app_id.desktop" || fail "the .desktop file names another icon"
grep -q "<release version=\"[0-9][^\"]*\" date=\"[0-9-]*\"" "$prefix/share/metainfo/$app_id.metainfo.xml" ||
  fail "the metainfo has no configured release"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$prefix/share/applications/$app_id.desktop" || fail "desktop-file-validate"
else
  echo "package_install: desktop-file-validate not installed (desktop-file-utils): not validated"
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$prefix/share/metainfo/$app_id.metainfo.xml" >"$work/as.txt" 2>&1 ||
    fail "appstreamcli validate: $(cat "$work/as.txt")"
else
  echo "package_install: appstreamcli not installed (appstream): metainfo not validated"
fi

# 2. The installed CLI, from elsewhere, with the trees out of sight where that is allowed.
mkdir "$work/elsewhere"
cd "$work/elsewhere"
hide=()
if unshare --mount true 2>/dev/null; then
  # sh -c: mount an empty tmpfs over each tree still visible (a build tree inside the source tree
  # is gone with it), check that the source tree is empty, then run the program.
  hide=(unshare --mount sh -c '
    for d in "$0" "$1"; do [ -d "$d" ] && mount -t tmpfs liftlab-hidden "$d"; done
    [ -z "$(ls -A "$0")" ] || { echo "the source tree is still visible" >&2; exit 97; }
    shift; exec "$@"' "$src" "$build")
  echo "package_install: the source and build trees are hidden while the installed programs run"
else
  echo "package_install: unshare --mount is not allowed here: the trees stay visible (the model path is still checked)"
fi
t2=$(date +%s.%N)
dir=$(env -u LIFTLAB_RESOURCE_DIR -u LIFTLAB_USER_GUIDE "${hide[@]}" "$prefix/bin/liftlab-cli" run cf-linear-probe \
  --steps 2 --out runs --set seeds=[0] --set log_every=1 --set task.n_train=256 --set task.n_test=128 \
  --set diagnostics.spectrum_every=0 --set diagnostics.one_step_every=0 2>"$work/cli.err") ||
  fail "the installed liftlab-cli failed: $(tail -5 "$work/cli.err")"
t3=$(date +%s.%N)
case "$dir" in /*) ;; *) dir=$work/elsewhere/$dir ;; esac
[ -f "$dir/summary.json" ] || fail "no summary.json in '$dir'"
python3 - "$dir" "$prefix/share/liftlab/models/fmnist_cnn_features.pt" <<'PY' || fail "the installed run is wrong"
import json, os, sys
run, model = sys.argv[1], sys.argv[2]
summary = json.load(open(os.path.join(run, "summary.json")))
assert summary["status"] == "ok", summary["status"]
assert all(r["status"] == "ok" for r in summary["runs"]), summary["runs"]
spec = json.load(open(os.path.join(run, "spec.json")))
script = spec["backbone"]["script"]
assert os.path.realpath(script) == os.path.realpath(model), \
    f"the preset's model was read from {script}, not from the installed {model}"
PY
[ -s "$dir/figures/test_loss.png" ] || fail "the installed liftlab-cli drew no figure"

# 3. The installed window opens the run (offscreen) and saves it.
QT_QPA_PLATFORM=offscreen timeout 120 env -u LIFTLAB_RESOURCE_DIR -u LIFTLAB_USER_GUIDE "${hide[@]}" \
  "$prefix/bin/liftlab" --open "$dir" --screenshot "$work/window.png" --quit-when-done \
  >/dev/null 2>"$work/gui.err" || fail "the installed liftlab failed: $(tail -5 "$work/gui.err")"
[ -s "$work/window.png" ] || fail "the installed liftlab saved no screenshot"
t4=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" 'BEGIN {
  printf "package_install: ok (install %.1f s, liftlab-cli run %.1f s, liftlab --open %.1f s)\n", b - a, d - c, e - d }'
