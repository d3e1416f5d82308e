#!/usr/bin/env bash
# Builds a training corpus from real code: Debian source packages compiled by clang-22,
# then extracted by mlgo-env. Idempotent: a package whose build finished is not rebuilt,
# and extraction is redone only when a package was (re)built or OUT has no corpus yet.
#
#   scripts/make_training_corpus.sh [--opt=-Oz|-O2] [--thinlto] OUT [PACKAGE...]
#   scripts/make_eval_corpus.sh     [--opt=-Oz|-O2] [--thinlto] OUT [PACKAGE...]
#
# --opt: the optimisation level every module is compiled at (and keeps in its command):
# -Oz (the default) for inlining-for-size, -O2 for the register-allocation problems.
# Without --thinlto (C packages): compiled with -Xclang -fembed-bitcode=all, then
# `mlgo-env corpus extract` over every object; OUT/corpus_description.json is the corpus.
# With --thinlto (C++ packages): each package is built through `mlgo-env corpus build
# --thinlto_build=local --cmd_override="<opt> -c"` (-flto=thin, CMake's BUILD_SHARED_LIBS=ON
# so libraries are linked by lld and their modules import callees from one another) into
# OUT/<package>/, then `corpus combine` writes OUT/corpus_description.json. Each module is
# the ThinLTO backend's input after importing (<m>.bc) with its index (<m>.thinlto.bc);
# episodes compile it as the link's backend would: clang <opt> -c -x ir <m>.bc
# -fthinlto-index=<m>.thinlto.bc.
#
# lua5.4, libzstd, bzip2 (C) and ninja-build, re2 (C++, --thinlto) are reserved for
# evaluation: this script refuses them, whatever is asked. make_eval_corpus.sh (which runs
# this script with --evaluation) builds only them, into an OUT marked EVALUATION-ONLY, and
# refuses anything else. A training OUT and an evaluation OUT never share builds.
# OUT/.work/ holds sources, builds and logs (OUT/.work/logs/<package>.build.log).
#
# Default packages: `default_c` / `default_cxx` below. Other C++ packages known to build
# (named explicitly; without --thinlto they are compiled with embedded bitcode like the C
# ones): yaml-cpp tinyxml2 pugixml double-conversion fmtlib libjsoncpp leveldb snappy
# gflags libebml taglib. Single-file libraries (tinyxml2, pugixml) import nothing with
# --thinlto.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
me=make_training_corpus
opt=-Oz
thinlto=0
purpose=training
while [[ $# -ge 1 && "$1" == --* ]]; do
  case "$1" in
    --opt=-Oz|--opt=-O2|--opt=-Os|--opt=-O3) opt="${1#--opt=}";;
    --thinlto) thinlto=1;;
    --evaluation) purpose=evaluation; me=make_eval_corpus;;
    *) echo "$me: unknown option '$1' (known: --opt=-Oz|-Os|-O2|-O3, --thinlto)" >&2; exit 2;;
  esac
  shift
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--opt=-Oz|-O2] [--thinlto] OUT [PACKAGE...]" >&2; exit 2; }
out_arg="$1"
shift
default_c=(zlib libpng1.6 libyaml expat pcre2 jansson lz4 brotli libsodium
           xz-utils jq nettle mbedtls libjpeg-turbo gzip libuv1)
default_cxx=(yaml-cpp leveldb double-conversion snappy libjsoncpp libebml)
eval_c=(lua5.4 libzstd bzip2)
eval_cxx=(ninja-build re2)
packages=("$@")
if [[ $purpose == evaluation ]]; then
  if ((thinlto)); then allowed=("${eval_cxx[@]}"); else allowed=("${eval_c[@]}"); fi
  ((${#packages[@]})) || packages=("${allowed[@]}")
  for p in "${packages[@]}"; do
    [[ " ${allowed[*]} " == *" $p "* ]] || {
      echo "$me: '$p' is not an evaluation package of this corpus; evaluation packages:" \
        "${eval_c[*]} (C), ${eval_cxx[*]} (C++, --thinlto)" >&2
      exit 2; }
  done
else
  if ((thinlto)); then default_packages=("${default_cxx[@]}"); else default_packages=("${default_c[@]}"); fi
  ((${#packages[@]})) || packages=("${default_packages[@]}")
  for p in "${packages[@]}"; do
    case "$p" in
      lua5.4|lua*|libzstd|zstd|bzip2|libbz2*|ninja-build|ninja|re2|libre2*)
        echo "$me: '$p' is reserved for evaluation; never train on it (scripts/make_eval_corpus.sh builds it)" >&2
        exit 2;;
    esac
  done
fi
for p in "${packages[@]}"; do
  [[ "$p" =~ ^[a-z0-9][a-z0-9.+-]*$ ]] || { echo "$me: '$p' is not a Debian source package name" >&2; exit 2; }
done
mlgo_env="${MLGO_ENV:-$here/build/src/mlgo-env}"
[[ -x "$mlgo_env" ]] || { echo "$me: $mlgo_env not built (run scripts/setup.sh)" >&2; exit 1; }
out="$(mkdir -p "$out_arg" && cd "$out_arg" && pwd)"
work="$out/.work"
# One kind of corpus per OUT: builds are reused only for the purpose, ThinLTO mode and
# optimisation level they were made for (an OUT from before --thinlto is C training).
kind="$purpose $([[ $thinlto == 1 ]] && echo thinlto || echo embedded-bitcode) $opt"
if [[ -f "$work/opt" ]]; then
  was="$(cat "$work/kind" 2>/dev/null || echo "training embedded-bitcode $(cat "$work/opt")")"
  [[ "$was" == "$kind" ]] || { echo "$me: $out holds a corpus for '$was', not '$kind'; use another OUT" >&2; exit 2; }
fi
mkdir -p "$work/src" "$work/logs"
echo "$opt" >"$work/opt"
echo "$kind" >"$work/kind"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)

# Tools the package builds need (llvm-ar: GNU ar's LLVM plugin cannot read clang-22's
# bitcode-carrying objects in every package's archive step).
tools=(dpkg-dev autoconf automake libtool make cmake pkg-config nasm clang-22 llvm-22)
((thinlto == 0)) || tools+=(lld-22)   # ThinLTO links: --save-temps=import, index files
[[ " ${packages[*]} " != *" re2 "* ]] || tools+=(unicode-data perl python3)  # re2's tables
missing=()
for t in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$t" 2>/dev/null | grep -q "install ok installed" || missing+=("$t")
done
need_update=0
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "$me: adding a deb-src entry (/etc/apt/sources.list.d/mlgo-env-src.sources)"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
    "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/mlgo-env-src.sources >/dev/null
  need_update=1
fi
if ((need_update)) || ((${#missing[@]})); then
  "${sudo_cmd[@]}" apt-get update -qq
fi
if ((${#missing[@]})); then
  echo "$me: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs="$(nproc)"
export CC="clang-22" CXX="clang++-22"
if ((thinlto)); then
  # corpus build's wrappers add -flto=thin and the lld link flags; -Oz/-O2 must reach the
  # front end (it sets the size attributes and runs the pre-link pipeline).
  export CFLAGS="$opt" CXXFLAGS="$opt"
else
  export CFLAGS="$opt -Xclang -fembed-bitcode=all" CXXFLAGS="$opt -Xclang -fembed-bitcode=all"
fi
export AR=llvm-ar-22 RANLIB=llvm-ranlib-22 NM=llvm-nm-22 MAKEINFO=true
export jobs thinlto

# Configures and builds one unpacked source tree with whatever build system it has.
build_tree() {
  local dir="$1" name="$2"
  cd "$dir"
  # Some source packages keep the project one level down (expat/).
  [[ -d "$dir/$name" && ! -f configure && ! -f configure.ac && ! -f CMakeLists.txt ]] && cd "$dir/$name"
  # Evaluation packages whose default build would miss the flags or compile each file
  # several times: one object per source file, built as upstream builds it.
  case "$name" in
    lua5.4)  # Debian's libtool build compiles every file 4 times (C and C++, PIC and not).
      mkdir -p upstream && tar -xzf "$dir"/../lua5.4_*.orig.tar.gz -C upstream --strip-components=1
      make -C upstream -j"$jobs" linux CC="$CC -std=gnu99" MYCFLAGS="$CFLAGS" AR="$AR rcu" \
        RANLIB="$RANLIB"
      return;;
    bzip2)  # its Makefile sets CFLAGS itself
      make -j"$jobs" libbz2.a bzip2 bzip2recover CC="$CC" AR="$AR" RANLIB="$RANLIB" \
        CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64"
      return;;
    libzstd)  # the zstd program compiles the whole library once; lib/ would add two copies
      make -C programs -j"$jobs" zstd-release CC="$CC" AR="$AR"
      return;;
    re2)  # the +dfsg source lacks the generated tables (Debian regenerates them)
      make REBUILD_TABLES=1 re2/perl_groups.cc re2/unicode_casefold.cc re2/unicode_groups.cc;;
  esac
  local extra=()
  case "$name" in
    mbedtls) extra=(-DMBEDTLS_FATAL_WARNINGS=OFF -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=ON);;
    snappy) extra=(-DSNAPPY_BUILD_TESTS=OFF -DSNAPPY_BUILD_BENCHMARKS=OFF);;
    leveldb) extra=(-DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF);;
    fmtlib) extra=(-DFMT_TEST=OFF -DFMT_DOC=OFF);;
    yaml-cpp) extra=(-DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=ON);;
    libjsoncpp) extra=(-DJSONCPP_WITH_TESTS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF);;
    re2) extra=(-DRE2_BUILD_TESTING=OFF);;
  esac
  # ThinLTO: shared libraries, so that lld links each library's objects (and they import
  # callees from one another); objects linked from static archives are not extracted.
  ((thinlto == 0)) || extra+=(-DBUILD_SHARED_LIBS=ON)
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

# Fetches package $1's source into $work/src/$1 and prints the unpacked tree.
fetch_source() {
  local p="$1"
  rm -rf "$work/src/$p"; mkdir -p "$work/src/$p"
  (cd "$work/src/$p" && apt-get source -qq "$p" >"$work/logs/$p.fetch.log" 2>&1) || {
    echo "$me: $p: apt-get source failed (see $work/logs/$p.fetch.log)" >&2; return 1; }
  find "$work/src/$p" -mindepth 1 -maxdepth 1 -type d | head -n1
}

count_modules() {
  /usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["modules"]))' "$1"
}

rebuilt=0
for p in "${packages[@]}"; do
  stamp="$work/$p.done"
  if [[ -f "$stamp" ]]; then echo "$me: $p: built already"; continue; fi
  echo "$me: $p: fetching source"
  tree="$(fetch_source "$p")" || exit 1
  echo "$me: $p: building in $tree"
  start=$SECONDS
  if ((thinlto)); then
    # One corpus per package, OUT/<package>/, from the compiles and links of its build.
    rm -rf "${out:?}/$p"
    export -f build_tree
    if ! "$mlgo_env" corpus build --thinlto_build=local --cmd_override="$opt -c" \
        --output_dir="$out/$p" --num_workers="$jobs" -- \
        bash -c 'build_tree "$1" "$2"' build_tree "$tree" "$p" >"$work/logs/$p.build.log" 2>&1; then
      echo "$me: $p: build or extraction failed (see $work/logs/$p.build.log); what it compiled is kept" >&2
    fi
    grep -E '^(extracted|left out|  [a-z])' "$work/logs/$p.build.log" | tail -n 8 || true
    n=0
    [[ -f "$out/$p/corpus_description.json" ]] && n=$(count_modules "$out/$p/corpus_description.json")
    echo "$me: $p: $n modules in $((SECONDS - start)) s"
    ((n > 0)) || { rm -rf "${out:?}/$p"; echo "$me: $p: no modules; not marked done" >&2; continue; }
  else
    if ! (build_tree "$tree" "$p") >"$work/logs/$p.build.log" 2>&1; then
      echo "$me: $p: build failed (see $work/logs/$p.build.log); its objects so far are kept" >&2
    fi
    n=$(find "$tree" -name '*.o' | wc -l)
    echo "$me: $p: $n objects in $((SECONDS - start)) s"
    ((n > 0)) || { echo "$me: $p: no objects; not marked done" >&2; continue; }
  fi
  touch "$stamp"; rebuilt=1
done

if ((thinlto)); then
  # OUT/<package>/ are corpora of their own; the description at OUT names their modules
  # as <package>/<module> (mlgo-utils' combine_training_corpus layout).
  "$mlgo_env" corpus combine --root_dir="$out" | tail -n 2
elif ((rebuilt)) || [[ ! -f "$out/corpus_description.json" ]]; then
  echo "$me: extracting"
  rm -rf "$out/corpus.tmp"
  # Directory input: every object under the sources, named relative to it (package/.../file).
  "$mlgo_env" corpus extract --input="$work/src" --input_type=directory \
    --output_dir="$out/corpus.tmp" --num_workers="$jobs" 2>&1 | tail -n 5
  # Publish: corpus files at OUT, work dir kept.
  find "$out" -mindepth 1 -maxdepth 1 ! -name .work ! -name corpus.tmp -exec rm -rf {} +
  (cd "$out/corpus.tmp" && find . -mindepth 1 -maxdepth 1 -exec mv {} "$out/" \;)
  rmdir "$out/corpus.tmp"
fi
if [[ $purpose == evaluation ]]; then
  printf 'Evaluation corpus of packages reserved for evaluation (%s).\nNever train or tune on it.\n' \
    "$(ls "$work/src" | tr '\n' ' ')" >"$out/EVALUATION-ONLY"
fi
echo "$me: $out: $(count_modules "$out/corpus_description.json") modules"
