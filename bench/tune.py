#!/usr/bin/python3
"""A Debian source package tuned by `python -m mlgo_env.tune` and built with the table, side by
side with its plain build.

    /usr/bin/python3 bench/tune.py --package xz-utils [--problem inlining|regalloc]
        [--minutes 20] [--workers 2] [--work /tmp/mlgo-bench-tune] [--rounds 3]

Steps (each printed with its wall time): fetch the source (`apt-get source`, once); capture
its modules with `mlgo-env corpus build` around the package's own configure and make; tune
them; build it plainly and with `mlgo-env-launch --tuning=DIR` (configured alike, the
launcher given as make's CC), and for inlining a third time with stock clang-22 and the
table's inline-replay file (DIR/inline-replay.flags added to CFLAGS), each with its own
build system; run the package's own tests on each. ThinLTO recipes (`cmake-thinlto`: C++
shared libraries by CMake; `make-thinlto`: a C package's own configure and make, work
directory `<name>-thinlto-<problem>`) compile with -flto=thin -gline-tables-only
-fdebug-compilation-dir=. and link with lld: captured with `--save-temps=import`, linked plainly, with Distributed ThinLTO
running the backends through the launcher, and with lld's own in-process backends given the
replay file (DIR/inline-replay.ldflags; docs/tuning.md); `make-thinlto` also builds plainly
without LTO (`nolto`), to say what ThinLTO itself costs or saves. Then side by side: the per-module sums tune reported (and the mean per-module
reward), each linked executable's and shared library's executable bytes (SHF_EXECINSTR
sections), the tests' exit codes, and what the launcher's log says. For --problem=regalloc,
also the package's workload (--rounds runs each way, alternating, median wall) and its
instructions under valgrind (callgrind's total, deterministic).

The opt level is -Oz for inlining and -O2 for regalloc. Reserved packages (lua5.4,
libzstd, bzip2, ninja-build, re2) are refused.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(CHECKOUT, "tests", "python"))
from test_launch import executable_sections  # noqa: E402
sys.path.insert(0, HERE)
from recipes import RECIPES, RESERVED, compressed_suffix  # noqa: E402,F401  (bench.RECIPES...)

MLGO_ENV = os.path.join(CHECKOUT, "build", "src", "mlgo-env")
LAUNCH = os.path.join(CHECKOUT, "build", "src", "mlgo-env-launch")

def say(text: str) -> None:
    print(text, flush=True)


def run(cmd: list[str], cwd: str, env: dict | None = None, log: str | None = None,
        check: bool = True) -> int:
    with open(log or os.devnull, "a") as out:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        raise SystemExit(f"bench/tune: {' '.join(cmd)} failed in {cwd} (log: {log})")
    return r.returncode


def fetch(package: str, work: str) -> str:
    src = os.path.join(work, "src", package)
    os.makedirs(src, exist_ok=True)
    trees = [d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))]
    if not trees:
        subprocess.run(["apt-get", "source", "-qq", package], cwd=src, check=True,
                       stdout=subprocess.DEVNULL)
        trees = [d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))]
    tree = os.path.join(src, sorted(trees)[0])
    # a source package whose build lives in a folder of its tree (expat: expat/)
    return prepare(os.path.join(tree, RECIPES.get(package, {}).get("subdir", "")))


def prepare(tree: str) -> str:
    """A tree without `configure` (a repository's, or a source package that ships only
    configure.ac) gets one from `autoreconf -fi`, in place (Debian's autoconf, automake,
    libtool and autopoint)."""
    if not os.path.exists(os.path.join(tree, "configure")) and \
            os.path.exists(os.path.join(tree, "configure.ac")):
        run(["autoreconf", "-fi"], tree, log=os.path.join(tree, "autoreconf.log"))
    return tree


def build(recipe: dict, tree: str, where: str, opt: str, cc: str | None, log: str,
          wrap: list[str] | None = None, check: bool = True) -> int:
    """Copies the tree to `where`, configures with clang-22 (None: with the CC that `wrap`
    sets) and makes with `cc` as CC (None: the configured one)."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(tree, where, symlinks=True)
    env = dict(os.environ, CFLAGS=opt, CXXFLAGS=opt)
    if cc is not None:
        env.update(CC="clang-22", CXX="clang++-22")
    make = ["make", f"-j{os.cpu_count() or 2}"] + ([f"CC='{cc}'"] if cc else [])
    if recipe["configure"]:
        steps = " && ".join([" ".join(recipe["configure"]), " ".join(make)])
    else:
        steps = " ".join(make + [shlex.quote(f"CFLAGS={opt}"), shlex.quote(f"MOREFLAGS={opt}")])
    return run((wrap or []) + ["sh", "-c", steps], where, env, log, check)


#: the command lld-22's Distributed ThinLTO gives each backend job, after the compiler
THINLTO_BACKEND = ("-c --target=x86_64-pc-linux-gnu -O2 -faddrsig -ffunction-sections "
                   "-fdata-sections -fpic -Wno-unused-command-line-argument")


#: ThinLTO builds' compile flags after the opt level: line locations in the bitcode, which
#: the replay file's keys are, and the same bitcode in every build directory (a promoted
#: local function's name holds its module's hash); the capture and every build alike, no
#: code changes with them
THINLTO_COMPILE = "-flto=thin -gline-tables-only -fdebug-compilation-dir=."
THINLTO_KINDS = ("cmake-thinlto", "make-thinlto")


def cmake_thinlto(tree: str, where: str, opt: str, link: str, log: str) -> None:
    """Configures (shared libraries, tests on, `opt THINLTO_COMPILE`) and builds with
    ninja, `link` as the linker flags."""
    shutil.rmtree(where, ignore_errors=True)
    flags = f"{opt} {THINLTO_COMPILE}"
    run(["cmake", "-S", tree, "-B", where, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=None",
         "-DCMAKE_C_COMPILER=clang-22", "-DCMAKE_CXX_COMPILER=clang++-22",
         "-DBUILD_SHARED_LIBS=ON", "-DBUILD_TESTING=ON", f"-DCMAKE_C_FLAGS={flags}",
         f"-DCMAKE_CXX_FLAGS={flags}", f"-DCMAKE_SHARED_LINKER_FLAGS={link}",
         f"-DCMAKE_EXE_LINKER_FLAGS={link}"], tree, log=log)
    run(["ninja", "-C", where, f"-j{os.cpu_count() or 2}"], where, log=log)


def make_thinlto(recipe: dict, tree: str, where: str, opt: str, link: str | None, log: str,
                 wrap: list[str] | None = None, check: bool = True) -> int:
    """The package's own configure and make with `opt THINLTO_COMPILE` and lld, `link` the
    link's flags (None: a plain build without LTO). The link flags go into
    CC (libtool drops driver flags it does not know from LDFLAGS when it links a shared
    library), given to configure as `clang-22 -fuse-ld=lld` and to make with `link`."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(tree, where, symlinks=True)
    flags = opt if link is None else f"{opt} {THINLTO_COMPILE}"
    cc = "clang-22" if link is None else "clang-22 -fuse-ld=lld"
    env = dict(os.environ, CFLAGS=flags, CXXFLAGS=flags, CC=cc)
    make = ["make", f"-j{os.cpu_count() or 2}", shlex.quote(
        f"CC={cc} -Wno-unused-command-line-argument {link or ''}".strip())]
    steps = " && ".join([" ".join(recipe["configure"]), " ".join(make)])
    return run((wrap or []) + ["sh", "-c", steps], where, env, log, check)


def thinlto_link(tuning: str) -> str:
    """Linker flags running lld's backends through the launcher with `tuning`. All are
    lld's own (-Wl,): libtool drops the driver's -fthinlto-distributor= from a shared
    library's link, and that library is then linked by lld's in-process backends."""
    prepend = [f"--tuning={tuning}", "--", shutil.which("clang-22") or "clang-22"]
    return " ".join([f"-fuse-ld=lld -Wl,--thinlto-distributor={LAUNCH}",
                     "-Wl,--thinlto-distributor-arg=--thinlto-jobs",
                     f"-Wl,--thinlto-remote-compiler={LAUNCH}"] +
                    [f"-Wl,--thinlto-remote-compiler-prepend-arg={a}" for a in prepend] +
                    ["-Wl,--thinlto-remote-compiler-arg=-x", "-Wl,--thinlto-remote-compiler-arg=ir"])


def capture(recipe: dict, tree: str, work: str, opt: str, corpus: str, logs: str) -> None:
    """The package's modules into `corpus`: embedded bitcode through `corpus build`, or for
    ThinLTO the modules lld's backends compile (`--save-temps=import`)."""
    if recipe.get("kind") in THINLTO_KINDS:
        where = os.path.join(work, "capture")
        link = "-fuse-ld=lld -Wl,--save-temps=import -Wl,--thinlto-emit-index-files"
        if recipe["kind"] == "cmake-thinlto":
            cmake_thinlto(tree, where, opt, link, os.path.join(logs, "capture"))
        else:
            make_thinlto(recipe, tree, where, opt, link, os.path.join(logs, "capture"))
        run([MLGO_ENV, "corpus", "extract", "--input_type=directory", f"--input={where}",
             "--thinlto_build=local", f"--cmd_override={THINLTO_BACKEND}",
             f"--output_dir={corpus}"], work, log=os.path.join(logs, "capture"))
        return
    # corpus build fails when some objects could not be extracted (zlib renames its
    # shared objects); the corpus of the others is still written and used.
    code = build(recipe, tree, os.path.join(work, "capture"), opt, None,
                 os.path.join(logs, "capture"),
                 [MLGO_ENV, "corpus", "build", f"--output_dir={corpus}", "--"], check=False)
    if not os.path.exists(os.path.join(corpus, "corpus_description.json")):
        raise SystemExit(f"bench/tune: capturing failed (log: {logs}/capture)")
    if code != 0:
        say(f"capture: corpus build exited {code}; its corpus holds what it could extract "
            f"(log: {logs}/capture)")


def build_both(recipe: dict, tree: str, builds: dict[str, str], opt: str, tuning: str,
               logs: str) -> None:
    """The plain build and the build with the table, by the package's own build system
    (ThinLTO: also lld's own backends with the replay file, and `nolto` if asked)."""
    if recipe.get("kind") in THINLTO_KINDS:
        ldflags = os.path.join(tuning, "inline-replay.ldflags")
        links = {"plain": "-fuse-ld=lld", "tuned": thinlto_link(tuning), "nolto": None}
        if "replay" in builds and os.path.exists(ldflags):
            with open(ldflags) as f:
                links["replay"] = f"-fuse-ld=lld {f.read().strip()}"
        for side, link in links.items():
            if side not in builds:
                continue
            if recipe["kind"] == "cmake-thinlto":
                cmake_thinlto(tree, builds[side], opt, link or "", os.path.join(logs, side))
            else:
                make_thinlto(recipe, tree, builds[side], opt, link, os.path.join(logs, side))
        return
    build(recipe, tree, builds["plain"], opt, "clang-22", os.path.join(logs, "plain"))
    build(recipe, tree, builds["tuned"], opt, f"{LAUNCH} --tuning={tuning} -- clang-22",
          os.path.join(logs, "tuned"))
    flags = os.path.join(tuning, "inline-replay.flags")
    if "replay" in builds and os.path.exists(flags):  # stock clang with the replay file
        with open(flags) as f:
            build(recipe, tree, builds["replay"], f"{opt} {f.read().strip()}", "clang-22",
                  os.path.join(logs, "replay"))


def linked(root: str) -> dict[str, int]:
    """{relative path: executable bytes} of the ELF executables and shared libraries."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "CMakeFiles"]  # CMake's compiler checks
        for name in files:
            path = os.path.join(dirpath, name)
            if name.endswith((".o", ".a", ".lo")) or os.path.islink(path):
                continue
            try:
                with open(path, "rb") as f:
                    head = f.read(18)
            except OSError:
                continue
            if head[:4] == b"\x7fELF" and head[16] in (2, 3):  # ET_EXEC, ET_DYN
                out[os.path.relpath(path, root)] = sum(len(b) for _, b in
                                                       executable_sections(path))
    return out


def instructions(argv: list[str], env: dict) -> int:
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit(f"bench/tune: valgrind failed on {argv}: {r.stderr[-500:]}")
    return int(m.group(1))


def workload(recipe: dict, builds: dict[str, str], data: str, rounds: int) -> None:
    for name, template in recipe["workload"]:
        results = {}
        for side in ("plain", "tuned"):
            root = builds[side]
            argv = [a.format(build=root, data=data) for a in template]
            env = dict(os.environ, LD_LIBRARY_PATH=":".join(
                os.path.join(root, d) for d in recipe.get("libs", [])))
            out = subprocess.run(argv, env=env, stdout=subprocess.PIPE, check=True).stdout
            results[side] = {"ir": instructions(argv, env), "out": out, "walls": [],
                             "argv": argv, "env": env}
        for r in range(rounds):
            for side in (("plain", "tuned") if r % 2 == 0 else ("tuned", "plain")):
                x = results[side]
                start = time.perf_counter()
                subprocess.run(x["argv"], env=x["env"], stdout=subprocess.DEVNULL, check=True)
                x["walls"].append(time.perf_counter() - start)
        p, t = results["plain"], results["tuned"]
        say(f"workload {name}: instructions {p['ir']:,} -> {t['ir']:,} "
            f"({t['ir'] / p['ir'] - 1:+.2%}); wall median {statistics.median(p['walls']):.3f} s -> "
            f"{statistics.median(t['walls']):.3f} s ({statistics.median(t['walls']) / statistics.median(p['walls']):.3f}x); "
            f"output {'identical' if p['out'] == t['out'] else 'DIFFERENT'}")


def report(recipe: dict, builds: dict[str, str], tuning: str, logs: str) -> None:
    """Linked sizes side by side, the package's tests on both builds, the launcher's log."""
    sizes = {side: linked(root) for side, root in builds.items() if os.path.isdir(root)}
    changes: dict[str, float] = {}
    for other in [s for s in sizes if s != "plain"]:
        total = [0, 0]
        for rel in sorted(set(sizes["plain"]) & set(sizes[other])):
            a_, b_ = sizes["plain"][rel], sizes[other][rel]
            total[0] += a_
            total[1] += b_
            say(f"linked {rel}: {a_} -> {b_} ({b_ / a_ - 1 if a_ else 0:+.2%}) [{other}]")
        say(f"linked total [{other}]: {total[0]} -> {total[1]} "
            f"({total[1] / total[0] - 1:+.2%})")
        changes[other] = total[1] / total[0] - 1
    if "tuned" in changes and "replay" in changes:
        say(f"replay against the launcher: {changes['replay']:+.2%} vs {changes['tuned']:+.2%} "
            f"({100 * (changes['replay'] - changes['tuned']):+.3f} percentage points)")
    if "nolto" in changes:  # the plain ThinLTO build against the plain build without LTO
        say(f"plain ThinLTO against plain without LTO: {-changes['nolto'] / (1 + changes['nolto']):+.2%}")
    for side, root in builds.items():
        if not os.path.isdir(root):
            continue
        code = run(recipe["check"], root, log=os.path.join(logs, f"{side}.check"), check=False)
        say(f"tests ({' '.join(recipe['check'])}) on the {side} build: exit {code}")
    status = subprocess.run(["/usr/bin/python3", "-m", "mlgo_env.tune", "status",
                             f"--tuning={tuning}"], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")))
    say("\n".join(status.stdout.splitlines()[:4]))


def workload_data(recipe: dict, tree: str, work: str, builds: dict[str, str]) -> str:
    """The workload's input (a tar of the source), and what decompression reads (made once,
    by the plain build)."""
    data = os.path.join(work, "workload.tar")
    if not os.path.exists(data):
        subprocess.run(["tar", "cf", data, "-C", tree, "."], check=True)
        plain_env = dict(os.environ, LD_LIBRARY_PATH=":".join(
            os.path.join(builds["plain"], d) for d in recipe.get("libs", [])))
        for name, template in recipe["workload"]:
            if name == "compress":
                argv = [x.format(build=builds["plain"], data=data) for x in template]
                with open(data + compressed_suffix(argv[0]), "wb") as f:
                    subprocess.run(argv, env=plain_env, stdout=f, check=True)
    return data


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", required=True)
    p.add_argument("--problem", default="inlining", choices=["inlining", "regalloc"])
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", default="/tmp/mlgo-bench-tune")
    p.add_argument("--workload-only", action="store_true",
                   help="regalloc: only the workload, on the builds an earlier run left")
    p.add_argument("--tune-only", action="store_true",
                   help="stop after tune (a later run reuses the corpus and the table)")
    a = p.parse_args()
    if a.package in RESERVED:
        p.error(f"{a.package} is reserved for evaluation")
    if a.package not in RECIPES:
        p.error(f"no recipe for {a.package} (known: {', '.join(sorted(RECIPES))})")
    recipe, opt = RECIPES[a.package], "-Oz" if a.problem == "inlining" else "-O2"
    work = os.path.join(a.work, f"{a.package}-{a.problem}")
    os.makedirs(work, exist_ok=True)
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    tree = fetch(recipe.get("source", a.package), a.work)
    if a.workload_only:
        builds = {"plain": os.path.join(work, "plain"), "tuned": os.path.join(work, "tuned")}
        workload(recipe, builds, workload_data(recipe, tree, work, builds), a.rounds)
        return 0
    t0 = time.perf_counter()
    corpus, tuning = os.path.join(work, "corpus"), os.path.join(work, "tuning")
    if not os.path.exists(os.path.join(corpus, "corpus_description.json")):
        capture(recipe, tree, work, opt, corpus, logs)
    say(f"captured {corpus} ({time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    tune = subprocess.run(["/usr/bin/python3", "-m", "mlgo_env.tune", f"--problem={a.problem}",
                           f"--corpus={corpus}", f"--output={tuning}", f"--minutes={a.minutes}",
                           f"--workers={a.workers}", "--progress-every=120"],
                          env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")),
                          capture_output=True, text=True)
    say(tune.stdout.rstrip())
    if tune.returncode != 0:
        raise SystemExit(f"bench/tune: tune failed: {tune.stderr[-2000:]}")
    say(f"tune: {time.perf_counter() - t0:.0f} s wall")
    if a.tune_only:
        return 0
    builds = {"plain": os.path.join(work, "plain"), "tuned": os.path.join(work, "tuned")}
    shutil.rmtree(os.path.join(work, "replay"), ignore_errors=True)
    if a.problem == "inlining":
        builds["replay"] = os.path.join(work, "replay")
    if recipe.get("kind") == "make-thinlto":
        builds["nolto"] = os.path.join(work, "nolto")
    log = os.path.join(tuning, "launch.log")
    if os.path.exists(log):
        os.unlink(log)
    build_both(recipe, tree, builds, opt, tuning, logs)
    report(recipe, builds, tuning, logs)
    if a.problem == "regalloc" and recipe["workload"]:
        workload(recipe, builds, workload_data(recipe, tree, work, builds), a.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
