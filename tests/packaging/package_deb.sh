#!/usr/bin/env bash
# package_deb: cpack builds liftlab_<version>_<arch>.deb from the build tree; its file list
# (dpkg-deb -c) holds the programs, resources, docs and desktop files under /usr and nothing
# elsewhere, and its control fields (dpkg-deb -I) name the package, version, architecture, section
# and maintainer, and Depends on the runtime libraries (from dpkg-shlibdeps) and OpenBLAS; every
# package Depends names is one this machine has installed (the build ran against them).
# usage: package_deb.sh BUILD_DIR VERSION APP_ID
set -euo pipefail
build=$(cd "$1" && pwd)
version=$2
app_id=$3
fail() {
  echo "package_deb: $*" >&2
  exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/liftlab-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT

t0=$(date +%s.%N)
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >"$work/cpack.log" 2>&1 ||
  fail "cpack failed: $(tail -20 "$work/cpack.log")"
t1=$(date +%s.%N)
arch=$(dpkg --print-architecture)
deb=$work/liftlab_${version}_${arch}.deb
[ -f "$deb" ] || fail "cpack wrote no $(basename "$deb"): $(ls "$work")"

# The file list: paths as dpkg-deb -c prints them (./usr/...).
dpkg-deb -c "$deb" >"$work/contents.txt" || fail "dpkg-deb -c failed"
awk '{print $NF}' "$work/contents.txt" | sed 's|^\./|/|' >"$work/files.txt"
for f in /usr/bin/liftlab /usr/bin/liftlab-cli \
  /usr/share/applications/$app_id.desktop \
  /usr/share/icons/hicolor/scalable/apps/$app_id.svg \
  /usr/share/metainfo/$app_id.metainfo.xml \
  /usr/share/liftlab/presets/cf-regression.json \
  /usr/share/liftlab/models/fmnist_cnn_features.pt \
  /usr/share/doc/liftlab/user-guide.md; do
  grep -qx "$f" "$work/files.txt" || fail "the package lacks $f"
done
outside=$(grep -v '^/usr/\|^/$\|^/usr$' "$work/files.txt" || true)
[ -z "$outside" ] || fail "the package installs outside /usr: $outside"
! grep -q '^/usr/local' "$work/files.txt" || fail "the package installs into /usr/local"
# The programs are executable for everyone.
for b in liftlab liftlab-cli; do
  grep -Eq "^-rwxr-xr-x .* \./usr/bin/$b$" "$work/contents.txt" || fail "/usr/bin/$b is not mode 755"
done

# The control fields.
field() { dpkg-deb -f "$deb" "$1"; }
dpkg-deb -I "$deb" >"$work/info.txt" || fail "dpkg-deb -I failed"
[ "$(field Package)" = liftlab ] || fail "Package: '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version: '$(field Version)', not $version"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: '$(field Architecture)', not $arch"
[ "$(field Section)" = science ] || fail "Section: '$(field Section)'"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[ -n "$(field Description)" ] || fail "no Description"
depends=$(field Depends)
[ -n "$depends" ] || fail "Depends is empty"
# Each runtime library the programs link comes from one of these packages (Debian 12 names, any
# version suffix); OpenBLAS is listed by hand (LibTorch reaches it through libblas.so.3).
for p in 'libqt6widgets6' 'libqt6gui6' 'libqt6core6' 'libqt6svg6' 'libqcustomplot2\.1-qt6' \
  'libtorch[0-9.]*' 'libssl3' 'libstdc\+\+6' 'libopenblas0-pthread'; do
  echo "$depends" | tr ',' '\n' | grep -Eq "^ *$p( |\(|$)" || fail "Depends lacks $p: $depends"
done
# Every package named (the first of each "a | b") is a real package: installed here.
echo "$depends" | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/ //g' | while read -r p; do
  [ -n "$p" ] || continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    fail "Depends names $p, which is not installed on the machine that built the package"
done
size=$(du -k "$deb" | cut -f1)
awk -v a="$t0" -v b="$t1" -v s="$size" 'BEGIN {
  printf "package_deb: ok (cpack %.1f s, %.1f MiB)\n", b - a, s / 1024 }'
echo "Depends: $depends"
