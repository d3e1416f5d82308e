#!/usr/bin/python3
"""How much of what a package's workload executes could register allocation touch: the
executed spill, reload and register-copy instructions of a Debian package's build, beside
the total (the limit a tuned eviction or priority decision can be read against).

    /usr/bin/python3 bench/regalloc_limit.py --package xz-utils [--builds plain,pgo,pgo+tuned]
        [--tuning DIR] [--work /tmp/mlgo-bench-pgo] [--held-back /usr/include/c++/12] [--reuse]

Steps, per build (plain -O2; PGO with WORK/<package>-regalloc/pgo.profdata, the profile
bench/tune_pgo.py made, or a new one made the same way; PGO + tuned through
mlgo-env-launch with --tuning, by default bench/tune_pgo.py's table):

1. the package built by its own build system (bench/recipes.py) with make's CC
   recording every compile (this script with --record: cwd and argv to a log, then the
   compiler itself, so the build is a plain one);
2. each recorded compile to an object run again with `-S` (same flags, no dependency
   output): clang's comments mark every spill and reload (bench/regalloc_marks.py); a
   label before each, the assembly assembled (clang -cc1as with the compile's target), and
   the object's executable bytes compared with the build's object (a difference drops the
   object and is counted);
3. the workload (the recipe's steps; input: a tar of --held-back, as bench/tune_pgo.py)
   under `valgrind --tool=callgrind --dump-instr=yes`: executions per instruction;
4. each executed program or library of the build tree: where each object's code sits in it
   (placement checked byte for byte), its disassembly (`llvm-objdump-22 -d`) for register
   copies, push/pop and stack accesses, and the counts joined.

Printed per build and workload step: instructions in all (the process, libc included) and
in the package's own code, executed spills, reloads (folded ones apart), register copies
(`mov`/`movaps`/... register to register: copies the allocator could have coalesced and the
moves the calling convention or a two-address instruction needs cannot be told apart),
push/pop of registers (callee-saved saves and restores) and stack accesses (memory operands
on %rsp), each with its share of all instructions; static counts of the executed files'
package code beside. WORK/<package>-regalloc/limit-<build>.json keeps the figures. The
reserved packages are refused.

The tuned build's spills and reloads are not marked: the launcher hands a `-S` compile to
clang with clang's own decisions, so its assembly would not be the tuned object's. Its
copies, push/pop and stack accesses are counted; against PGO, the change of stack accesses
is that of spills and reloads up to what passes after the allocator move (the other stack
loads and stores are fixed before it).
"""
from __future__ import annotations

import argparse
import bisect
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import regalloc_marks as rm  # noqa: E402

CLANG, OBJDUMP = "clang-22", "llvm-objdump-22"
#: dependency-output options (with an argument, and without)
DEP_WITH_ARG = {"-MF", "-MT", "-MQ", "-MJ"}
DEP_FLAGS = {"-MD", "-MMD", "-MP", "-MG"}


def record_and_run(log: str, argv: list[str]) -> None:
    """Appends {"cwd", "argv"} as a JSON line to `log` (one write, so parallel compiles do
    not interleave) and replaces this process with `argv`. Does not return."""
    line = json.dumps({"cwd": os.getcwd(), "argv": argv}) + "\n"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    os.execvp(argv[0], argv)


#: what names a source to compile, and the options whose next argument is not a source
SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".i", ".ii", ".m", ".mm")
TAKES_ARG = {"-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter",
             "-iquote", "-x", "-Xclang", "-mllvm", "-Xlinker", "-Xassembler",
             "-Xpreprocessor", "-target", "-arch", "--param", "-isysroot", "-B"} | DEP_WITH_ARG


def asm_commands(argv: list[str]) -> list[tuple[list[str], str]]:
    """[(the compile of one source again, writing assembly to OBJECT.rl.s; OBJECT)] for a
    compile to objects (`-c`: one source with `-o X.o`, or sources each to its own name
    with .o in the working directory), [] for anything else (links, compile-and-link)."""
    if "-c" not in argv:
        return []
    out, args, sources, skip = None, [argv[0]], [], False
    for i in range(1, len(argv)):
        a = argv[i]
        if skip:
            skip = False
        elif a == "-o":
            out, skip = (argv[i + 1] if i + 1 < len(argv) else None), True
        elif a.startswith("-o") and len(a) > 2:
            out = a[2:]
        elif a in DEP_WITH_ARG:
            skip = True
        elif a == "-c" or a in DEP_FLAGS or a.startswith(("-Wp,-MD", "-Wp,-MMD")) or \
                (a[:3] in DEP_WITH_ARG and len(a) > 3):
            continue
        elif not a.startswith("-") and a.endswith(SOURCES) and argv[i - 1] not in TAKES_ARG:
            sources.append(len(args))
            args.append(a)
        else:
            args.append(a)
    if not sources or (out is not None and len(sources) > 1):
        return []
    objects = [out] if out is not None else \
        [os.path.splitext(os.path.basename(args[i]))[0] + ".o" for i in sources]
    if not all(o.endswith(".o") for o in objects):
        return []
    return [([a for j, a in enumerate(args) if j == i or j not in sources] +
             ["-S", "-o", o + ".rl.s"], o) for i, o in zip(sources, objects)]


def mark_object(cwd: str, asm_argv: list[str], out: str) -> dict:
    """Step 2 for one object of a recorded compile: {"object", "marked", "marks"} or
    {"object", "error"} (the -S compile failed, or the marked object's code is not the
    build's)."""
    obj = os.path.normpath(os.path.join(cwd, out))
    if not os.path.exists(obj):
        return {"object": obj, "error": "not there after the build (it moved or deleted it)"}
    r = subprocess.run(asm_argv, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"object": obj, "error": f"-S compile failed: {r.stderr.strip()[-300:]}"}
    with open(obj + ".rl.s") as f:
        text, marks = rm.mark_assembly(f.read())
    with open(obj + ".rl-marked.s", "w") as f:
        f.write(text)
    target = assembler_target(asm_argv, cwd)
    built = _elf(obj)
    code = [(s.name, s.data) for s in built.executable().values()]
    for nops in NOP_TUNINGS:  # the first that gives the object's own alignment padding
        r = subprocess.run([CLANG, "-cc1as", "-filetype", "obj"] + target + nops +
                           ["-o", obj + ".rl-marked.o", obj + ".rl-marked.s"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return {"object": obj, "error": f"assembling failed: {r.stderr.strip()[-300:]}"}
        marked = _elf(obj + ".rl-marked.o")
        if code == [(s.name, s.data) for s in marked.executable().values()]:
            return {"object": obj, "marked": obj + ".rl-marked.o", "marks": len(marks)}
    return {"object": obj, "error": "the assembly's code differs from the object's"}


#: the assembler is not told the compile's tuning (clang -cc1as ignores -tune-cpu), which
#: sets the longest nop of alignment padding (generic tuning: 15 bytes); tried in turn
NOP_TUNINGS = [["-target-feature", "+fast-15bytenop"], [],
               ["-target-feature", "+fast-11bytenop"], ["-target-feature", "+fast-7bytenop"]]


def assembler_target(argv: list[str], cwd: str) -> list[str]:
    """The compile's target options for `clang -cc1as` (-triple, -target-cpu,
    -target-feature..., -mrelocation-model), read from its `-###` cc1 command."""
    r = subprocess.run([argv[0], "-###"] + argv[1:], cwd=cwd, capture_output=True, text=True)
    cc1 = next((shlex.split(line) for line in r.stderr.splitlines() if '"-cc1"' in line), None)
    if cc1 is None:
        raise SystemExit(f"bench/regalloc_limit: no cc1 command from {argv[0]} -### in {cwd}")
    out = []
    for i, a in enumerate(cc1[:-1]):
        if a in ("-triple", "-target-cpu", "-target-feature", "-mrelocation-model"):
            out += [a, cc1[i + 1]]
    return out


def _elf(path: str) -> rm.Elf:
    with open(path, "rb") as f:
        return rm.read_elf(f.read(), path)


def mark_build(log: str, jobs: int, marks: bool = True) -> list[dict]:
    """Step 2 for every compile `log` recorded (in parallel, `jobs` at a time); without
    `marks`, each object as it is (no spill or reload known: {"object", "marked": the
    object, "marks": None})."""
    with open(log) as f:
        items = [(r["cwd"], asm, out) for r in map(json.loads, filter(str.strip, f))
                 for asm, out in asm_commands(r["argv"])]
    if not marks:
        return [{"object": os.path.normpath(os.path.join(cwd, out)),
                 "marked": os.path.normpath(os.path.join(cwd, out)), "marks": None}
                for cwd, _, out in items]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda job: mark_object(*job), items))


class Binary:
    """One executed file of the build: its package code, marks and instructions."""

    def __init__(self, path: str, objects: list[dict]):
        linked = _elf(path)
        self.ranges: list[tuple[int, int]] = []  # [start, end) of placed object sections
        self.marks: dict[int, str] = {}  # address -> kind
        self.objects = 0  # objects with code in this file
        functions, claimed = rm.function_index(linked), set()
        for o in objects:
            marked = _elf(o["marked"])
            placed = {}
            for index, found in rm.place_sections(marked, linked, functions).items():
                # the same code linked twice: each copy to one object (a libtool twin,
                # the same code compiled twice, shares the first)
                placed[index] = next((a for a in found if a not in claimed), found[0])
                claimed.add(placed[index])
                self.ranges.append((placed[index],
                                    placed[index] + len(marked.sections[index].data)))
            self.objects += bool(placed)
            for section, offset, kind in rm.marks_of(marked):
                if section in placed:
                    self.marks[placed[section] + offset] = kind
        self.ranges = sorted(set(self.ranges))
        dump = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", path], check=True,
                              capture_output=True, text=True).stdout
        self.instructions = [(a, m, o) for a, m, o in rm.read_objdump(dump) if self.inside(a)]
        self.copies = {a for a, m, o in self.instructions if rm.is_register_copy(m, o)}
        self.pushpop = {a for a, m, o in self.instructions if rm.is_push_or_pop(m, o)}
        self.stack = {a for a, m, o in self.instructions if rm.is_stack_access(m, o)}

    def inside(self, addr: int) -> bool:
        i = bisect.bisect_right(self.ranges, (addr, float("inf"))) - 1
        return i >= 0 and self.ranges[i][0] <= addr < self.ranges[i][1]


def classes(binary: Binary) -> dict[str, set[int]]:
    """{figure: the addresses it counts} for one executed file."""
    out = {kind: {a for a, k in binary.marks.items() if k == kind} for kind in rm.KINDS}
    out["copy"], out["push/pop"], out["stack"] = binary.copies, binary.pushpop, binary.stack
    out["stack, not spill or reload"] = binary.stack - set(binary.marks)
    return out


def measure(argv: list[str], env: dict, out: str, root: str,
            binaries: dict[str, Binary], objects: list[dict]) -> dict:
    """Step 3-4 for one workload step: the figures, executed and static."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                        f"--callgrind-out-file={out}"] + argv, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bench/regalloc_limit: valgrind failed on {argv}: {r.stderr[-500:]}")
    with open(out) as f:
        counts, total = rm.read_callgrind(f.read())
    fig = {"total": total, "package": 0, "static instructions": 0, "files": {},
           "marked": all(o["marks"] is not None for o in objects)}
    for ob, table in counts.items():
        path = os.path.realpath(ob)  # "???" for code of no file
        if not (os.path.isabs(ob) and path.startswith(os.path.realpath(root) + os.sep)):
            continue
        if path not in binaries:
            binaries[path] = Binary(path, objects)
        b = binaries[path]
        fig["files"][os.path.relpath(path, root)] = b.objects
        fig["package"] += sum(n for a, n in table.items() if b.inside(a))
        fig["static instructions"] += len(b.instructions)
        for name, where in classes(b).items():
            fig[name] = fig.get(name, 0) + sum(table.get(a, 0) for a in where)
            fig[f"static {name}"] = fig.get(f"static {name}", 0) + len(where)
    return fig


def say_figures(build: str, step: str, fig: dict) -> None:
    """Prints one build's figures for one workload step (shares of all instructions)."""
    total, get = fig["total"], lambda key: fig.get(key, 0)

    def share(n: int) -> str:
        return f"{n:,} ({n / total:.3%})"
    spills, reloads = get("spill") + get("folded-spill"), get("reload") + get("folded-reload")
    moved = spills + reloads + get("copy")
    known = (f"spills {share(spills)}, reloads {share(reloads)} (folded "
             f"{get('folded-reload'):,}), " if fig["marked"] else "spills and reloads unknown, ")
    print(f"{build} {step}: instructions {total:,}, in the package's code "
          f"{share(fig['package'])}; {known}register copies {share(get('copy'))}"
          + (f"; spill+reload+copy {share(moved)}" if fig["marked"] else "")
          + f"; push/pop {share(get('push/pop'))}; stack accesses {share(get('stack'))}"
          + (f", of which not spills or reloads {get('stack, not spill or reload'):,}"
             if fig["marked"] else ""), flush=True)
    st = fig["static instructions"]
    ss = get("static spill") + get("static folded-spill")
    sr = get("static reload") + get("static folded-reload")
    marked = (f"spills {ss:,}, reloads {sr:,} (folded {get('static folded-reload'):,}), "
              if fig["marked"] else "")
    print(f"  static, package code of {', '.join(sorted(fig['files']))}: {st:,} instructions, "
          f"{marked}copies {get('static copy'):,}, push/pop {get('static push/pop'):,}, "
          f"stack accesses {get('static stack'):,}", flush=True)


def say_against(base: dict, other: dict, names: tuple[str, str]) -> None:
    """Where the instructions `other` saves against `base` went, in shares of `base`'s
    total: register copies, push/pop, and stack accesses (whose other loads and stores
    register allocation leaves alone, so their change is the spills' and reloads')."""
    total = base["total"]

    def change(key: str) -> str:
        d = other.get(key, 0) - base.get(key, 0)
        return f"{d:+,} ({d / total:+.3%})"
    print(f"  {names[1]} against {names[0]}: instructions {change('total')}, register copies "
          f"{change('copy')}, stack accesses {change('stack')}, push/pop "
          f"{change('push/pop')}", flush=True)


SIDES = ("plain", "pgo", "pgo+tuned")


def options(reserved: set[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", required=True)
    p.add_argument("--builds", default="plain,pgo",
                   help="comma-separated: plain, pgo, pgo+tuned (needs --tuning)")
    p.add_argument("--tuning", help="pgo+tuned: the tuning directory (default: "
                   "WORK/<package>-regalloc/tuning, bench/tune_pgo.py's)")
    p.add_argument("--held-back", default="/usr/include/c++/12",
                   help="a directory whose tar is the workload's input")
    p.add_argument("--work", default="/tmp/mlgo-bench-pgo")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--reuse", action="store_true",
                   help="keep the builds an earlier run left (WORK/<package>-regalloc/limit-*)")
    a = p.parse_args()
    if a.package in reserved:
        p.error(f"{a.package} is reserved for evaluation")
    a.builds = a.builds.split(",")
    if not a.builds or set(a.builds) - set(SIDES):
        p.error(f"--builds: some of {', '.join(SIDES)}")
    return a


def build_recorded(a: argparse.Namespace, recipe: dict, tree: str, work: str, side: str,
                   flags: str) -> tuple[str, list[dict]]:
    """Steps 1-2 for one build: (its root, its objects, marked unless tuned)."""
    import tune as bench
    root, log = os.path.join(work, f"limit-{side}"), os.path.join(work, f"limit-{side}.compiles")
    if not (a.reuse and os.path.exists(log) and os.path.isdir(root)):
        if os.path.exists(log):
            os.unlink(log)
        compiler = CLANG
        if side == "pgo+tuned":
            compiler = (f"{bench.LAUNCH} --tuning={a.tuning} "
                        f"--log={os.path.join(work, 'limit-pgo+tuned.launch.log')} -- {CLANG}")
        cc = f"/usr/bin/python3 {os.path.abspath(__file__)} --record {log} -- {compiler}"
        bench.build(recipe, tree, root, flags, cc, os.path.join(work, "logs", f"limit-{side}"))
    objects = mark_build(log, a.jobs, marks=side != "pgo+tuned")
    good = [o for o in objects if "error" not in o]
    marks = sum(o["marks"] or 0 for o in good)
    print(f"{side}: {len(objects)} compiles to objects, {len(good)} used ("
          + (f"{marks:,} spills and reloads marked" if side != "pgo+tuned" else "not marked")
          + f"), {len(objects) - len(good)} dropped", flush=True)
    reasons: dict[str, list[str]] = {}
    for o in objects:
        if "error" in o:
            reasons.setdefault(o["error"], []).append(os.path.relpath(o["object"], root))
    for error, names in reasons.items():
        more = ", ..." if len(names) > 4 else ""
        print(f"  dropped {len(names)} ({', '.join(names[:4])}{more}): {error}", flush=True)
    return root, good


def main() -> int:
    if len(sys.argv) > 3 and sys.argv[1] == "--record" and sys.argv[3] == "--":
        record_and_run(sys.argv[2], sys.argv[4:])  # make's CC: record, then compile
    import tune as bench  # noqa: E402  (bench/tune.py: recipes, builds)
    import tune_pgo  # noqa: E402  (the profile, the held-back input, the workload)
    a = options(bench.RESERVED)
    recipe = bench.RECIPES.get(a.package)
    if recipe is None or not recipe["workload"] or recipe.get("kind"):
        raise SystemExit(f"bench/regalloc_limit: no make recipe with a workload for "
                         f"{a.package} (bench/recipes.py)")
    work = os.path.join(a.work, f"{a.package}-regalloc")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    a.tuning = a.tuning or os.path.join(work, "tuning")
    if "pgo+tuned" in a.builds and not os.path.isdir(a.tuning):
        raise SystemExit(f"bench/regalloc_limit: pgo+tuned: no tuning directory {a.tuning}")
    tree = bench.fetch(a.package, a.work)
    flags = {"plain": "-O2"}
    if set(a.builds) - {"plain"}:
        profile = os.path.join(work, "pgo.profdata")
        if not os.path.exists(profile):
            training = tune_pgo.tar_of(tree, os.path.join(work, "training.tar"))
            profile = tune_pgo.profile(recipe, tree, work, os.path.join(work, "logs"), training)
        flags["pgo"] = flags["pgo+tuned"] = f"-O2 -fprofile-instr-use={profile}"
    data = tune_pgo.tar_of(a.held_back, os.path.join(work, "limit-input.tar"))
    figures: dict[str, dict] = {}
    for side in [s for s in SIDES if s in a.builds]:
        root, objects = build_recorded(a, recipe, tree, work, side, flags[side])
        env = tune_pgo.lib_env(recipe, root)
        tune_pgo.run_workload(recipe, root, data, env)  # the decompression's input
        binaries: dict[str, Binary] = {}
        figures[side] = {}
        for step, argv in tune_pgo.inputs_for(recipe, root, data):
            out = os.path.join(work, f"limit-{side}.{step}.callgrind")
            figures[side][step] = measure(argv, env, out, root, binaries, objects)
            say_figures(side, step, figures[side][step])
            if side == "pgo+tuned" and "pgo" in figures:
                say_against(figures["pgo"][step], figures[side][step], ("PGO", "PGO + tuned"))
        with open(os.path.join(work, f"limit-{side}.json"), "w") as f:
            json.dump({"flags": flags[side], "input": data, "figures": figures[side]}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
