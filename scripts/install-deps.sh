#!/usr/bin/env bash
# Installs the Debian packages LiftLab needs, only those that are missing, then checks that
# LibTorch will use OpenBLAS (without libopenblas0-pthread it silently falls back to reference BLAS).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  qt6-base-dev qt6-svg-dev libqt6svg6 libqt6opengl6-dev
  libqcustomplot-dev libqcustomplot2.1-qt6
  libtorch-dev libgloo-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  libopenblas0-pthread libopenblas-pthread-dev zlib1g-dev libssl-dev
  dataset-fashion-mnist
  xvfb xauth fonts-dejavu-core
  python3-torch python3-numpy
  clang libclang-rt-14-dev  # libFuzzer targets (tests/fuzz, scripts/fuzz.sh)
  locales  # comma-decimal locales for the locale tests (generated below)
  # the .deb and its checks (cmake/Install.cmake, ctest package_deb / package_install):
  # dpkg-shlibdeps, `file` (CPack's shared-library scan), the .desktop and metainfo validators
  dpkg-dev file desktop-file-utils appstream
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: all packages present"
fi

# The tests run the CLI, the census and the window under comma-decimal locales (ctest *_de, the
# locale_identity test): generate the two they use where the system lacks them.
for loc in de_DE fr_FR; do
  if locale -a 2>/dev/null | grep -qix "$loc.utf-\?8"; then continue; fi
  echo "install-deps: generating the locale $loc.UTF-8"
  $sudo_cmd localedef -i "$loc" -f UTF-8 "$loc.UTF-8"
done

# LibTorch links libblas.so.3 through the alternatives system; make sure it resolves to OpenBLAS.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) echo "install-deps: BLAS = $blas" ;;
  *) echo "install-deps: WARNING: libblas.so.3 resolves to '$blas', not OpenBLAS; LibTorch matmul will be slow" >&2 ;;
esac
