#!/usr/bin/env bash
# Builds a training corpus from real code: Debian source packages compiled by clang-22
# with the bitcode embedded, then `mlgo-env corpus extract`. Idempotent: a package whose
# build finished is not rebuilt, and extraction is redone only when a package was
# (re)built or OUT has no corpus yet.
#
#   scripts/make_training_corpus.sh [--opt=-Oz|-O2] OUT [PACKAGE...]
#
# --opt: the optimisation level every module is compiled at (and keeps in its .cmd):
# -Oz (the default) for inlining-for-size, -O2 for the register-allocation problems.
#
# OUT/corpus_description.json is the corpus; OUT/.work/ holds sources, builds and logs.
# Default packages: see `default_packages` below. lua5.4, libzstd, bzip2, ninja-build and
# re2 are reserved for evaluation and refused, whatever is asked. C++ packages known to build and extract
# (named explicitly, after the defaults to keep them): yaml-cpp tinyxml2 pugixml
# double-conversion fmtlib libjsoncpp leveldb snappy gflags libebml taglib.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
opt=-Oz
while [[ $# -ge 1 && "$1" == --* ]]; do
  case "$1" in
    --opt=-Oz|--opt=-O2|--opt=-Os|--opt=-O3) opt="${1#--opt=}";;
    *) echo "make_training_corpus: unknown option '$1' (known: --opt=-Oz|-Os|-O2|-O3)" >&2; exit 2;;
  esac
  shift
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--opt=-Oz|-O2] OUT [PACKAGE...]" >&2; exit 2; }
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
default_packages=(zlib libpng1.6 libyaml expat pcre2 jansson lz4 brotli libsodium
                  xz-utils jq nettle mbedtls libjpeg-turbo gzip libuv1)
packages=("$@")
((${#packages[@]})) || packages=("${default_packages[@]}")
for p in "${packages[@]}"; do
  case "$p" in
    lua5.4|lua*|libzstd|zstd|bzip2|libbz2*|ninja-build|ninja|re2|libre2*)
      echo "make_training_corpus: '$p' is reserved for evaluation; never train on it" >&2; exit 2;;
  esac
done

mlgo_env="${MLGO_ENV:-$here/build/src/mlgo-env}"
[[ -x "$mlgo_env" ]] || { echo "make_training_corpus: $mlgo_env not built (run scripts/setup.sh)" >&2; exit 1; }
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)

# Tools the package builds need (llvm-ar: GNU ar's LLVM plugin cannot read clang-22's
# bitcode-carrying objects in every package's archive step).
tools=(dpkg-dev autoconf automake libtool make cmake pkg-config nasm clang-22 llvm-22)
missing=()
for t in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$t" 2>/dev/null | grep -q "install ok installed" || missing+=("$t")
done
need_update=0
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "make_training_corpus: adding a deb-src entry (/etc/apt/sources.list.d/mlgo-env-src.sources)"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
    "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/mlgo-env-src.sources >/dev/null
  need_update=1
fi
if ((need_update)) || ((${#missing[@]})); then
  "${sudo_cmd[@]}" apt-get update -qq
fi
if ((${#missing[@]})); then
  echo "make_training_corpus: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

work="$out/.work"
mkdir -p "$work/src" "$work/logs"
# One optimisation level per OUT: its builds are reused only at the level they were made at.
if [[ -f "$work/opt" && "$(cat "$work/opt")" != "$opt" ]]; then
  echo "make_training_corpus: $out was built at $(cat "$work/opt"), not $opt; use another OUT" >&2; exit 2
fi
echo "$opt" >"$work/opt"
jobs="$(nproc)"
export CC="clang-22" CXX="clang++-22"
export CFLAGS="$opt -Xclang -fembed-bitcode=all" CXXFLAGS="$opt -Xclang -fembed-bitcode=all"
export AR=llvm-ar-22 RANLIB=llvm-ranlib-22 NM=llvm-nm-22 MAKEINFO=true

# Configures and builds one unpacked source tree with whatever build system it has.
build_tree() {
  local dir="$1" name="$2"
  cd "$dir"
  # Some source packages keep the project one level down (expat/).
  [[ -d "$dir/$name" && ! -f configure && ! -f configure.ac && ! -f CMakeLists.txt ]] && cd "$dir/$name"
  local extra=()
  case "$name" in
    mbedtls) extra=(-DMBEDTLS_FATAL_WARNINGS=OFF -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=ON);;
    snappy) extra=(-DSNAPPY_BUILD_TESTS=OFF -DSNAPPY_BUILD_BENCHMARKS=OFF);;
    leveldb) extra=(-DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF);;
    fmtlib) extra=(-DFMT_TEST=OFF -DFMT_DOC=OFF);;
    yaml-cpp) extra=(-DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=ON);;
    libjsoncpp) extra=(-DJSONCPP_WITH_TESTS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF);;
  esac
  if [[ -f CMakeLists.txt && ( ! -f configure || "$name" == mbedtls || "$name" == brotli ) ]]; then
    cmake -S . -B _build -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=None \
      -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_AR="$(command -v $AR)" \
      -DCMAKE_RANLIB="$(command -v $RANLIB)" -DBUILD_TESTING=OFF "${extra[@]}"
    make -C _build -j"$jobs"
    return
  fi
  if [[ ! -x configure && ( -f configure.ac || -f configure.in ) ]]; then
    autoreconf -fi
  fi
  if [[ -x configure ]] && grep -q "Generated by GNU Autoconf" configure; then
    ./configure --disable-dependency-tracking --disable-shared
  elif [[ -x configure ]]; then
    ./configure --static   # a hand-written configure (zlib's)
  fi
  make -j"$jobs" CC="$CC" AR="$AR" RANLIB="$RANLIB"
}

rebuilt=0
for p in "${packages[@]}"; do
  stamp="$work/$p.done"
  if [[ -f "$stamp" ]]; then echo "make_training_corpus: $p: built already"; continue; fi
  echo "make_training_corpus: $p: fetching source"
  rm -rf "$work/src/$p"; mkdir -p "$work/src/$p"
  (cd "$work/src/$p" && apt-get source -qq "$p" >"$work/logs/$p.fetch.log" 2>&1) || {
    echo "make_training_corpus: $p: apt-get source failed (see $work/logs/$p.fetch.log)" >&2; exit 1; }
  tree="$(find "$work/src/$p" -mindepth 1 -maxdepth 1 -type d | head -n1)"
  echo "make_training_corpus: $p: building in $tree"
  if ! (build_tree "$tree" "$p") >"$work/logs/$p.build.log" 2>&1; then
    echo "make_training_corpus: $p: build failed (see $work/logs/$p.build.log); its objects so far are kept" >&2
  fi
  n=$(find "$tree" -name '*.o' | wc -l)
  echo "make_training_corpus: $p: $n objects"
  ((n > 0)) || { echo "make_training_corpus: $p: no objects; not marked done" >&2; continue; }
  touch "$stamp"; rebuilt=1
done

if ((rebuilt)) || [[ ! -f "$out/corpus_description.json" ]]; then
  echo "make_training_corpus: extracting"
  rm -rf "$out/corpus.tmp"
  # Directory input: every object under the sources, named relative to it (package/.../file).
  "$mlgo_env" corpus extract --input="$work/src" --input_type=directory \
    --output_dir="$out/corpus.tmp" --num_workers="$jobs" 2>&1 | tail -n 5
  # Publish: corpus files at OUT, work dir kept.
  find "$out" -mindepth 1 -maxdepth 1 ! -name .work ! -name corpus.tmp -exec rm -rf {} +
  (cd "$out/corpus.tmp" && find . -mindepth 1 -maxdepth 1 -exec mv {} "$out/" \;)
  rmdir "$out/corpus.tmp"
fi
modules=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["modules"]))' "$out/corpus_description.json")
echo "make_training_corpus: $out: $modules modules"
