#!/usr/bin/env bash
# Runs every libFuzzer target of build-asan/ for a bounded time each
# (default 30 s), starting from its seed corpus tests/fuzz/<name without fuzz_>:
# fuzz_stream_reader, fuzz_rpc_request (protocol/) and fuzz_line_handler
# (server/: whole request lines, decoded and dispatched on an environment
# over the fake compiler driver), fuzz_tuning_table (tuning/: the tuning
# table reader, manifests and entries files) and fuzz_policy_file (policy/: the
# policy reader, then binding and one decision). Fails on any crash or leak.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
build="$here/build-asan"
found=0
for fuzzer in "$build"/*/fuzz_*; do  # build-asan/<layer>/fuzz_*
  [[ -f "$fuzzer" && -x "$fuzzer" ]] || continue
  found=1
  name="$(basename "$fuzzer")"
  seeds="$here/tests/fuzz/${name#fuzz_}"
  work="$build/fuzz-work/$name"
  mkdir -p "$work"
  echo "fuzz: $name for ${seconds}s"
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$work")
  [[ -d "$seeds" ]] && args+=("$seeds")
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "$fuzzer" "${args[@]}")
done
((found)) || { echo "fuzz: no fuzz targets found in $build" >&2; exit 1; }
