#!/usr/bin/env bash
# Installs every Debian package mlgo-env needs, then configures and builds it.
# Idempotent: re-running only rebuilds what changed.
#   scripts/setup.sh                 -> build/ (RelWithDebInfo), every target
#   MLGO_BUILD_TARGETS="t u" scripts/setup.sh    -> only targets t and u and what they
#                                       need (scripts/run.sh: mlgo_main_job)
#   MLGO_BUILD_DIR=dir MLGO_CMAKE_ARGS="..." scripts/setup.sh
#   MLGO_EXTRA_PACKAGES="p q" scripts/setup.sh   -> also installs p and q (scripts/test.sh)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MLGO_BUILD_DIR:-$here/build}"

packages=(
  clang-22 llvm-22 llvm-22-dev libclang-rt-22-dev   # the compiler we drive, LLVM libraries, sanitizer/fuzzer runtimes
  lld-22 make                                       # ThinLTO corpora (lld's index files); corpus build tests
  zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libcurl4-openssl-dev  # what LLVM's CMake config links
  cmake ninja-build pkg-config
  libboost-dev libboost-filesystem-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  python3 valgrind
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-matplotlib  # the Python package mlgo_env
  python3-pip python3-setuptools python3-wheel python3-venv  # pip install ./python
  python3-distributed                               # mlgo_env.cluster: Dask (--scheduler)
)
# shellcheck disable=SC2206 # a list of package names
packages+=(${MLGO_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Configure once (clang-22 builds the project too: one toolchain, libFuzzer included).
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$here" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    ${MLGO_CMAKE_ARGS:-}
fi
# shellcheck disable=SC2206 # a list of target names
targets=(${MLGO_BUILD_TARGETS:-})
if ((${#targets[@]})); then
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
else
  cmake --build "$build" -j "$(nproc)"
fi
