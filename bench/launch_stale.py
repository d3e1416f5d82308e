#!/usr/bin/python3
"""What the launcher's site keys and stale route cost per compile, on one generated module.

    /usr/bin/python3 bench/launch_stale.py [--functions 400] [--rounds 15]
        [--launcher build/src/mlgo-env-launch] [--work /tmp/mlgo-bench-stale]

Generates a C module of `--functions` small static functions calling each other (about one
inlining decision per function), captures it with `mlgo-env corpus build`, tunes it briefly
(`python -m mlgo_env.tune`, 0.3 minutes), then times one `-Oz -c` compile of it, `--rounds`
times each way, the ways interleaved in every round:

- plain: clang-22 alone;
- exact, no site keys: through the launcher, with the table's site keys and module index
  removed (what the launcher did before site keys);
- exact: through the launcher with the table as tune wrote it (every decision's site key is
  hashed and compared);
- stale: the module with one function edited (one more call site), through the launcher:
  the module index finds the entry and every decision is answered by its site key;
- fallback: the same edited module with `--no-stale`.

Prints the median wall and CPU (launcher and compiler) seconds of each way and the ratios to
plain, and checks what the launcher's log says of each. Needs MLGO_ENV_CORE_DIR (the build's
python/) for tune, and clang-22 on PATH. Blocks; a few minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(CHECKOUT, "python"))

from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402


def module_source(functions: int, edited: bool) -> str:
    rng = random.Random(7)
    out = ["#include <stdio.h>"] + [f"static int f{i}(int x, int y);" for i in range(functions)]
    for i in range(functions):
        body = [f"  int r = x * {i % 13 + 3} + (y ^ {i});"]
        if edited and i == 1:  # one more call site: the module's stream changes
            body.append(f"  if (r & 8) r += f{functions - 1}(r, y);")
        for j in range(3):
            k = rng.randrange(i + 1, functions + 40)
            if k < functions:
                body.append(f"  if (r & {1 << j}) r += f{k}(r >> 1, y + {j});")
        body.append(f"  return r - (x >> {i % 5 + 1});")
        out.append(f"static int f{i}(int x, int y) {{\n" + "\n".join(body) + "\n}")
    out.append("int run(int x) { int s = 0; for (int i = 0; i < 40; ++i) "
               "s += f0(x + i, i) ^ f1(i, x); return s; }")
    return "\n".join(out) + "\n"


def prepare(work: str, functions: int, mlgo_env: str) -> str:
    """The tuned table of the generated module (tuned once; kept in `work`)."""
    tuning = os.path.join(work, "tuning")
    if os.path.exists(os.path.join(tuning, "module-index.json")):
        return tuning
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "m.c"), "w") as f:
        f.write(module_source(functions, False))
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write("m.o: m.c\n\t$(CC) -Oz -c m.c -o m.o\n")
    subprocess.run([mlgo_env, "corpus", "build", f"--output_dir={work}/corpus", "--", "make"],
                   cwd=src, check=True, capture_output=True)
    tune(TuneOptions("inlining", f"{work}/corpus", tuning, minutes=0.3, workers=2,
                     progress_every=0), lambda _: None)
    return tuning


def without_sites(tuning: str, out: str) -> str:
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(tuning, out)
    os.unlink(os.path.join(out, "module-index.json"))
    for name in os.listdir(os.path.join(out, "modules")):
        path = os.path.join(out, "modules", name)
        with open(path) as f:
            doc = json.load(f)
        for e in doc["entries"]:
            e.pop("sites", None)
        with open(path, "w") as f:
            json.dump(doc, f)
    return out


def timed(command: list[str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--functions", type=int, default=400)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--launcher", default=os.path.join(CHECKOUT, "build/src/mlgo-env-launch"))
    p.add_argument("--mlgo-env", default=os.path.join(CHECKOUT, "build/src/mlgo-env"))
    p.add_argument("--work", default="/tmp/mlgo-bench-stale")
    a = p.parse_args()
    tuning = prepare(a.work, a.functions, a.mlgo_env)
    old = without_sites(tuning, os.path.join(a.work, "tuning-without-sites"))
    run = os.path.join(a.work, "run")
    os.makedirs(run, exist_ok=True)
    for name, edited in (("m.c", False), ("edited.c", True)):
        with open(os.path.join(run, name), "w") as f:
            f.write(module_source(a.functions, edited))
    log = os.path.join(a.work, "launch.log")
    ways = {
        "plain": ["clang-22", "-Oz", "-c", "m.c", "-o", "m.o"],
        "exact, no site keys": [a.launcher, f"--tuning={old}", f"--log={log}", "--",
                                "clang-22", "-Oz", "-c", "m.c", "-o", "m.o"],
        "exact": [a.launcher, f"--tuning={tuning}", f"--log={log}", "--", "clang-22", "-Oz",
                  "-c", "m.c", "-o", "m.o"],
        "stale": [a.launcher, f"--tuning={tuning}", f"--log={log}", "--", "clang-22", "-Oz",
                  "-c", "edited.c", "-o", "m.o"],
        "fallback": [a.launcher, f"--tuning={tuning}", f"--log={log}", "--no-stale", "--",
                     "clang-22", "-Oz", "-c", "edited.c", "-o", "m.o"],
    }
    outcomes: dict[str, set] = {}
    times: dict[str, list[tuple[float, float]]] = {w: [] for w in ways}
    for r in range(a.rounds + 1):  # round 0 warms the caches and is not kept
        order = list(ways) if r % 2 else list(reversed(ways))
        for way in order:
            if os.path.exists(log):
                os.unlink(log)
            t = timed(ways[way], run)
            if r:
                times[way].append(t)
            if os.path.exists(log):
                with open(log) as f:
                    line = json.loads(f.readline())
                outcomes.setdefault(way, set()).add(
                    line["outcome"] + (f" {line['from_entry']}/{line['decisions']}"
                                       if line["outcome"] == "stale" else ""))
    wall0 = statistics.median(w for w, _ in times["plain"])
    cpu0 = statistics.median(c for _, c in times["plain"])
    print(f"{a.functions} functions, {a.rounds} rounds; medians (ratio to plain)")
    for way, ts in times.items():
        wall, cpu = statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)
        print(f"  {way:20s} wall {wall:.3f} s ({wall / wall0:.3f}x)  cpu {cpu:.3f} s "
              f"({cpu / cpu0:.3f}x)  {' '.join(sorted(outcomes.get(way, [])))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
