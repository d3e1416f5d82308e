#!/usr/bin/python3
"""A real project's build through `mlgo-env launch` against the plain build, side by side.

    /usr/bin/python3 bench/launch.py [--package zlib|small-files|<a CMake project>]
        [--rounds 3] [--jobs 2] [--tuning DIR | --tune-minutes M --cflags -Oz]
        [--launcher build/src/mlgo-env-launch] [--work /tmp/mlgo-bench-launch]

Fetches the Debian source package (`apt-get source`, once, into --work), configures it
with clang-22 (a CMake project with CMAKE_<LANG>_COMPILER_LAUNCHER set on the launched
side), builds each side once untimed, then times its own build step (zlib: `make`, others: `cmake --build`)
`--rounds` times each way, alternating which side goes first: plainly, and with every
compiler call going through the launcher with a policy equal to clang's default (the
anchored margin policy at zero shift), or with `--tuning=DIR` a tuning table.
`small-files` is no package but a generated project of 40 small C files and a main
(`make`; a compile is a few tens of milliseconds, so what the launcher adds per call shows).
`--tune-minutes M` (make-built projects) captures the project with `mlgo-env corpus build`
and tunes it (inlining) into `<work>/tuning-<package>`, once, and launches with that table.
Prints wall and CPU seconds per round, the
per-round ratios and their median (target: <= 1.10x wall), checks that the launched
objects' executable bytes equal the plain ones, and measures the launcher's start-up
(`LAUNCHER --policy=P -- true` against `true`, both programs: mlgo-env-launch and
`mlgo-env launch`).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(CHECKOUT, "python"))
sys.path.insert(0, os.path.join(CHECKOUT, "tests", "python"))

import numpy as np  # noqa: E402

from mlgo_env.policies.policy import Layer, Policy, save_policy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recipes import RESERVED  # noqa: E402


def zero_shift_policy() -> Policy:
    return Policy("inlining", ["threshold", "cost_estimate", "inlining_default"], np.zeros(3),
                  np.ones(3), [Layer(np.array([[1.0], [0.0], [0.0], [0.0]]), np.zeros(1),
                                     "linear")],
                  transforms=["identity"] * 3,
                  margin={"plus": "threshold", "floor": 1.0, "minus": "cost_estimate",
                          "anchor": "inlining_default", "epsilon": 0.5})


def fetch(package: str, work: str) -> str:
    """The unpacked source tree of `package` under work/src (fetched once)."""
    src = os.path.join(work, "src", package)
    os.makedirs(src, exist_ok=True)
    trees = [d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))]
    if not trees:
        subprocess.run(["apt-get", "source", "-qq", package], cwd=src, check=True)
        trees = [d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))]
    return os.path.join(src, sorted(trees)[0])


SMALL_FILES = 40


def write_small_files(build: str) -> None:
    """The `small-files` project: SMALL_FILES small C files (two exported functions over
    static helpers, a few inlining decisions each), a main calling them, a Makefile."""
    os.makedirs(os.path.join(build, "src"), exist_ok=True)
    calls = []
    for i in range(SMALL_FILES):
        with open(os.path.join(build, "src", f"f{i}.c"), "w") as f:
            f.write(f"""#include <stddef.h>
static int mix(int a, int b) {{ return (a * {i + 3}) ^ (b >> {i % 5 + 1}); }}
static int clampv(int v, int lo, int hi) {{ return v < lo ? lo : v > hi ? hi : v; }}
static long acc(const int *v, size_t n, int k) {{
  long s = 0;
  for (size_t j = 0; j < n; ++j)
    s += mix(v[j], k) + clampv(v[j], -k, k);
  return s;
}}
long f{i}_sum(const int *v, size_t n) {{ return acc(v, n, {i + 1}) + acc(v, n / 2, {i + 7}); }}
int f{i}_pick(int a, int b) {{ return clampv(mix(a, b), 0, {100 + i}); }}
""")
        calls.append(f"long f{i}_sum(const int *v, size_t n);\nint f{i}_pick(int a, int b);\n")
    with open(os.path.join(build, "src", "main.c"), "w") as f:
        f.write("#include <stdio.h>\n#include <stddef.h>\n" + "".join(calls))
        f.write("int main(void) {\n  int v[] = {1, 5, -3, 8, 13, 2, 7};\n  long t = 0;\n")
        f.write("".join(f"  t += f{i}_sum(v, 7) + f{i}_pick((int)t, {i});\n"
                        for i in range(SMALL_FILES)))
        f.write('  printf("%ld\\n", t);\n  return 0;\n}\n')
    with open(os.path.join(build, "Makefile"), "w") as f:
        f.write("CC ?= clang-22\nCFLAGS ?= -O2\nSRCS = $(wildcard src/*.c)\n"
                "OBJS = $(SRCS:.c=.o)\nprog: $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $(OBJS)\n"
                "src/%.o: src/%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n"
                "clean:\n\trm -f src/*.o prog\n.PHONY: clean\n")


class Recipe:
    """How a package configures (not timed) and builds (timed)."""

    def __init__(self, package: str, jobs: int, cflags: str = ""):
        self.package, self.jobs, self.cflags = package, jobs, cflags

    def configure(self, tree: str, build: str, launcher: list[str] | None) -> None:
        env = dict(os.environ, CC="clang-22", CXX="clang++-22")
        if self.cflags:  # the level a tuning table was made at, on both sides
            env.update(CFLAGS=self.cflags, CXXFLAGS=self.cflags)
        if self.package == "small-files":
            write_small_files(build)
        elif self.package == "zlib":
            shutil.copytree(tree, build, symlinks=True)
            subprocess.run(["./configure", "--static"], cwd=build, env=env, check=True,
                           stdout=subprocess.DEVNULL)
        else:  # a CMake project (at the top of the tree or one folder down)
            tops = [tree] + [os.path.join(tree, d) for d in sorted(os.listdir(tree))]
            source = next((t for t in tops if os.path.exists(os.path.join(t, "CMakeLists.txt"))),
                          None)
            if source is None:
                raise SystemExit(f"bench_launch: {self.package} is neither zlib nor a CMake "
                                 "project")
            # The launcher through CMake's own variables, as a user would set them.
            value = ";".join(launcher) if launcher else ""
            subprocess.run(["cmake", "-S", source, "-B", build, "-G", "Unix Makefiles",
                            "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_COMPILER=clang-22",
                            "-DCMAKE_CXX_COMPILER=clang++-22", "-DBUILD_TESTING=OFF",
                            f"-DCMAKE_C_COMPILER_LAUNCHER={value}",
                            f"-DCMAKE_CXX_COMPILER_LAUNCHER={value}"],
                           env=env, check=True, stdout=subprocess.DEVNULL)

    def made(self) -> bool:
        """Whether the project builds with make (else CMake)."""
        return self.package in ("zlib", "small-files")

    def build_command(self, build: str, launcher: list[str] | None) -> list[str]:
        if self.made():
            cc = " ".join(launcher + ["clang-22"]) if launcher else "clang-22"
            cmd = ["make", f"-j{self.jobs}", f"CC={cc}"]
            if self.package == "small-files" and self.cflags:
                cmd.append(f"CFLAGS={self.cflags}")
            return cmd + (["libz.a", "example", "minigzip"] if self.package == "zlib" else [])
        return ["cmake", "--build", build, f"-j{self.jobs}"]  # configured with its launcher

    def build(self, build: str, launcher: list[str] | None) -> None:
        subprocess.run(self.build_command(build, launcher), cwd=build, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def clean(self, build: str) -> None:
        if self.made():
            subprocess.run(["make", "clean"], cwd=build, check=True, stdout=subprocess.DEVNULL)
        else:
            subprocess.run(["cmake", "--build", build, "--target", "clean"], check=True,
                           stdout=subprocess.DEVNULL)


def capture_and_tune(recipe: Recipe, tree: str, work: str, mlgo_env: str,
                     minutes: float) -> str:
    """The table of `recipe`'s project: captured with corpus build, tuned for `minutes`
    (once; a later run reuses it). Returns the tuning directory."""
    tuning = os.path.join(work, f"tuning-{recipe.package}")
    if os.path.exists(os.path.join(tuning, "tuning.json")):
        return tuning
    if not recipe.made():
        raise SystemExit("bench_launch: --tune-minutes needs a make-built project")
    capture, corpus = os.path.join(work, "capture"), os.path.join(work, f"corpus-{recipe.package}")
    shutil.rmtree(capture, ignore_errors=True)
    recipe.configure(tree, capture, None)
    subprocess.run([mlgo_env, "corpus", "build", f"--output_dir={corpus}", "--"] +
                   recipe.build_command(capture, None), cwd=capture, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-m", "mlgo_env.tune", "--problem=inlining",
                    f"--corpus={corpus}", f"--output={tuning}", f"--minutes={minutes}",
                    "--no-replay-file"], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")))
    return tuning


def timed(fn) -> tuple[float, float]:
    """(wall, CPU of children) seconds of fn()."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def startup(cmd: list[str], n: int = 40) -> float:
    """Median milliseconds of running `cmd` n times."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--package", default="zlib")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--launcher", default=os.path.join(CHECKOUT, "build", "src", "mlgo-env-launch"))
    p.add_argument("--mlgo-env", default=os.path.join(CHECKOUT, "build", "src", "mlgo-env"))
    p.add_argument("--work", default="/tmp/mlgo-bench-launch")
    p.add_argument("--cflags", default="", help="CFLAGS/CXXFLAGS of both builds (a tuning "
                                                "table applies only at its level, e.g. -Oz)")
    p.add_argument("--tuning", help="launch with this tuning table (python -m mlgo_env.tune) "
                                    "instead of the zero-shift policy; objects then differ")
    p.add_argument("--tune-minutes", type=float,
                   help="capture and tune the project first (make-built projects), then "
                        "launch with that table")
    p.add_argument("--via-mlgo-env", action="store_true",
                   help="launch through `mlgo-env launch` (loads libLLVM.so) instead")
    a = p.parse_args()
    if a.package in RESERVED:
        print(f"bench_launch: note: {a.package} is reserved for evaluation; a build-speed "
              "benchmark on it is allowed", file=sys.stderr)
    from test_launch import executable_sections, objects_under  # what the tests use

    os.makedirs(a.work, exist_ok=True)
    policy = os.path.join(a.work, "zero-shift.json")
    save_policy(zero_shift_policy(), policy)
    tree = "" if a.package == "small-files" else fetch(a.package, a.work)
    recipe = Recipe(a.package, a.jobs, a.cflags)
    if a.tune_minutes and not a.tuning:
        a.tuning = capture_and_tune(recipe, tree, a.work, a.mlgo_env, a.tune_minutes)
    how = [f"--tuning={a.tuning}", "--no-log"] if a.tuning else [f"--policy={policy}"]
    launcher = ([a.mlgo_env, "launch"] if a.via_mlgo_env else [a.launcher]) + how + ["--"]
    scratch = os.path.join(a.work, "tmp")
    os.makedirs(scratch, exist_ok=True)
    os.environ["TMPDIR"] = scratch
    builds = {}
    for side in ("plain", "launched"):
        builds[side] = os.path.join(a.work, f"build-{a.package}-{side}")
        shutil.rmtree(builds[side], ignore_errors=True)
        recipe.configure(tree, builds[side], launcher if side == "launched" else None)
        # One untimed build first: generated files and first-time steps are not the
        # compiles being compared.
        recipe.build(builds[side], launcher if side == "launched" else None)

    print(f"bench_launch: {a.package} ({os.path.basename(tree) or 'generated'}), -j{a.jobs}, "
          f"{a.rounds} rounds, launcher {' '.join(launcher)} clang-22")
    rows = []
    for r in range(a.rounds):
        result = {}
        order = ("plain", "launched") if r % 2 == 0 else ("launched", "plain")
        for side in order:
            recipe.clean(builds[side])
            result[side] = timed(lambda: recipe.build(builds[side],
                                                      launcher if side == "launched" else None))
        rows.append(result)
        (pw, pc), (lw, lc) = result["plain"], result["launched"]
        print(f"  round {r + 1}: plain {pw:6.2f} s wall {pc:6.2f} s cpu | launched {lw:6.2f} s "
              f"wall {lc:6.2f} s cpu | ratio {lw / pw:.3f}x wall, {lc / pc:.3f}x cpu")
    ratios = [row["launched"][0] / row["plain"][0] for row in rows]
    cpu = [row["launched"][1] / row["plain"][1] for row in rows]
    median = statistics.median(ratios)
    print(f"  median ratio: {median:.3f}x wall ({statistics.median(cpu):.3f}x cpu); target <= "
          f"1.10x wall: {'met' if median <= 1.10 else 'NOT met'}")

    plain, launched = objects_under(builds["plain"]), objects_under(builds["launched"])
    same = sum(executable_sections(plain[n]) == executable_sections(launched[n])
               for n in plain if n in launched)
    print(f"  objects: {len(plain)} plain, {len(launched)} launched, {same} with identical "
          f"executable bytes")
    if a.tuning:
        def total(found: dict[str, str]) -> int:
            return sum(len(b) for path in found.values() for _, b in executable_sections(path))
        print(f"  executable bytes of the objects: plain {total(plain)}, tuned {total(launched)}")
    if os.listdir(scratch):
        print(f"  LEFT BEHIND in {scratch}: {os.listdir(scratch)}")

    true = shutil.which("true")
    base = startup([true])
    lean = startup([a.launcher, f"--policy={policy}", "--", true])
    print(f"  start-up (median of 40, pass-through to `true`): true {base:.1f} ms; "
          f"mlgo-env-launch {lean:.1f} ms (+{lean - base:.1f})", end="")
    if os.path.exists(a.mlgo_env):
        full = startup([a.mlgo_env, "launch", f"--policy={policy}", "--", true])
        print(f"; mlgo-env launch {full:.1f} ms (+{full - base:.1f})")
    else:
        print()
    return 0 if a.tuning or same == len(plain) == len(launched) else 1


if __name__ == "__main__":
    sys.exit(main())
