"""The inline-replay file: a tuning table's inlining decisions as lines clang-22's own replay
advisor reads, so a build applies them with stock clang and no launcher.

    python -m mlgo_env.tune replay-file --tuning=DIR --corpus=DIR [--workers=2]

writes DIR/inline-replay.txt, DIR/inline-replay.flags (the flags to add to the build's
CFLAGS/CXXFLAGS) and DIR/inline-replay.json (per module: lines, exact or why not).

How a module's lines are found (the compile is the corpus's own command, from its
compile_commands.json, run in its directory with its outputs sent to a scratch dir):
1. the launcher replays the table's decisions in a compile that also writes the final IR
   and the optimisation record (`-gline-tables-only`: locations; the stream is the same);
   the record's decisions that depart from clang's default are the lines to write;
2. a "no" keeps its call in the final IR, whose debug location is the replay key, inlined-at
   chain included; a "yes" made at the caller's own code is keyed from the caller's
   subprogram; a "yes" inside code inlined earlier is found by compiling with the lines so
   far (the call is then still there) and reading it, until nothing new is found;
3. the module compiled with its lines must give the tuned object's executable bytes
   (`exact`); the launcher's tuned object with `-gline-tables-only` is the reference.
Then all modules' lines are merged (a key two modules answer differently keeps the answer
of the module that saves more), and every module is compiled once more with the merged
file and compared again: the report's `exact` is that last check.

Blocking; runs `workers` compiles at once. Errors: ValueError/OSError naming the file or
module; a module whose compile fails is reported (`why`) and gets no lines.
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import hashlib
import json
import os
import struct
import subprocess
import tempfile
from typing import Any, Callable

from . import ir_sites
from .table import read_entries, read_manifest, write_atomic

#: added to the build's compiles with the replay file (locations without debug sections
#: would also do: any -Rpass=REGEX; -gline-tables-only is what the lines were made with)
FORMAT = "LineColumn"
_DEP_FLAGS_WITH_VALUE = {"-MF", "-MT", "-MQ", "-o"}
_DEP_FLAGS = {"-MD", "-MMD", "-MP", "-M", "-MM"}


def replay_flags(path: str) -> list[str]:
    """The compile flags that make clang-22 apply the replay file at `path`."""
    return ["-gline-tables-only", "-mllvm", f"-cgscc-inline-replay={os.path.abspath(path)}",
            "-mllvm", f"-cgscc-inline-replay-format={FORMAT}"]


@dataclasses.dataclass
class Command:
    arguments: list[str]   # the compiler and its flags, without -o and dependency outputs
    directory: str


def compile_commands(corpus: str) -> dict[str, Command]:
    """{module name: its compile} from the corpus's compile_commands.json; modules are named
    as `mlgo-env corpus build` names them (the object relative to the entry's directory)."""
    path = os.path.join(corpus, "compile_commands.json")
    with open(path) as f:
        entries = json.load(f)
    out = {}
    for e in entries:
        args, directory = e.get("arguments"), e.get("directory")
        if not isinstance(args, list) or not isinstance(directory, str):
            raise ValueError(f"{path}: an entry lacks arguments or directory")
        kept, output, i = [], None, 0
        while i < len(args):
            a = args[i]
            if a in _DEP_FLAGS_WITH_VALUE and i + 1 < len(args):
                output = args[i + 1] if a == "-o" else output
                i += 2
                continue
            if a.startswith("-o") and len(a) > 2:
                output = a[2:]
            elif a not in _DEP_FLAGS:
                kept.append(a)
            i += 1
        if output is None:
            continue
        obj = os.path.normpath(os.path.join(directory, output))
        command = Command(kept, directory)
        out[os.path.relpath(obj, directory)] = command
        out.setdefault(obj, command)
    return out


def executable_bytes(path: str) -> bytes:
    """The SHF_EXECINSTR sections of a 64-bit little-endian ELF object, concatenated."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _name, _type, flags, _addr, offset, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        if flags & 0x4 and _type != 8:  # SHF_EXECINSTR, not SHT_NOBITS
            out.append(data[offset:offset + size])
    return b"".join(out)


@dataclasses.dataclass
class ModuleLines:
    module: str
    saving: float
    lines: dict[tuple[str, str, str], bool] = dataclasses.field(default_factory=dict)
    callers: set[str] = dataclasses.field(default_factory=set)
    departures: int = 0
    unresolved: int = 0
    exact_alone: bool = False
    exact: bool = False
    why: str = ""
    #: executable bytes of the tuned object (clang's own for a module without an entry);
    #: None when the module could not be compiled
    tuned: bytes | None = None
    #: executable bytes of the object the whole file gives (len), after verification
    replayed: int | None = None


class _Compiler:
    """Runs one module's compiles in a scratch directory."""

    def __init__(self, cmd: Command, launcher: str, tuning: str, scratch: str):
        self.cmd, self.launcher, self.tuning, self.scratch = cmd, launcher, tuning, scratch

    def run(self, extra: list[str], output: str, tuned: bool) -> str:
        argv = list(self.cmd.arguments)
        log = os.path.join(self.scratch, "launch.log")
        if tuned:
            argv = [self.launcher, f"--tuning={self.tuning}", f"--log={log}", "--"] + argv
            if os.path.exists(log):
                os.unlink(log)
        out = os.path.join(self.scratch, output)
        r = subprocess.run(argv + ["-gline-tables-only", "-w", "-o", out] + extra,
                           cwd=self.cmd.directory, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"compile failed ({r.returncode}): {r.stderr.strip()[-400:]}")
        if tuned:
            with open(log) as f:
                outcome = json.loads(f.read().splitlines()[-1])
            if outcome.get("outcome") not in ("tuned", "no-decisions"):
                raise RuntimeError(f"the launcher did not apply the table to this compile "
                                   f"({outcome.get('outcome')}: {outcome.get('why')})")
        return out

    def ir(self, extra: list[str], name: str, tuned: bool) -> str:
        bc = self.run(["-emit-llvm"] + extra, name + ".bc", tuned)
        r = subprocess.run(["llvm-dis-22", bc, "-o", "-"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"llvm-dis-22 failed: {r.stderr.strip()[-400:]}")
        return r.stdout


def write_lines(path: str, lines: dict[tuple[str, str, str], bool]) -> None:
    text = "".join(ir_sites.replay_line(callee, caller, key, yes) + "\n"
                   for (caller, callee, key), yes in sorted(lines.items()))
    write_atomic(path, text)


def _copied_keys(site: tuple, by_loc: dict[tuple, list[ir_sites.Call]],
                 frame_of: dict[str, tuple[str, int, str]]) -> set[str]:
    """Keys of a call whose caller is gone from the IR (inlined everywhere, then deleted):
    its copies in other functions carry the caller's frame, and the caller's own key is
    their chain up to that frame (the frame whose function has the caller's name, first
    line and file: short names alone are ambiguous)."""
    function = frame_of.get(site[0])
    out = set()
    for call in by_loc.get(site[1:], ()) if function else ():
        if function in call.functions:
            j = call.functions.index(function)
            out.add(" @ ".join(call.key.split(" @ ")[:j + 1]))
    return out


def _resolve(groups: dict[tuple, list[ir_sites.Decision]], pending: set[tuple],
             calls: list[ir_sites.Call], lines: dict,
             frame_of: dict[str, tuple[str, int, str]]) -> bool:
    """Keys for the pending groups whose call, or a copy of it, is in `calls`; True if any
    was added."""
    by_site: dict[tuple, set[str]] = {}
    by_loc: dict[tuple, list[ir_sites.Call]] = {}
    for c in calls:
        by_site.setdefault(c.site, set()).add(c.key)
        by_loc.setdefault(c.site[1:], []).append(c)
    added = False
    for site in list(pending):
        keys = by_site.get(site) or _copied_keys(site, by_loc, frame_of)
        if not keys:
            continue
        answer = groups[site][0].inline
        for key in keys:
            if lines.get((site[0], site[1], key)) is None:
                lines[(site[0], site[1], key)] = answer
                added = True
        pending.discard(site)
    return added


def _tuned_decisions(c: _Compiler, result: ModuleLines) -> tuple[list[ir_sites.Decision], str]:
    """The tuned compile's decisions and final IR; sets result.tuned."""
    record = os.path.join(c.scratch, "tuned.yaml")
    tuned_ir = c.ir(["-fsave-optimization-record", f"-foptimization-record-file={record}",
                     "-foptimization-record-passes=inline-ml"], "tuned", tuned=True)
    result.tuned = executable_bytes(c.run([], "tuned.o", tuned=True))
    with open(record) as f:
        return ir_sites.parse_records(f.read()), tuned_ir


def derive(module: str, cmd: Command, launcher: str, tuning: str, saving: float,
           scratch: str, rounds: int = 6) -> ModuleLines:
    """One module's lines, found and checked alone (steps 1-3 of the module doc)."""
    result = ModuleLines(module, saving)
    c = _Compiler(cmd, launcher, tuning, scratch)
    decisions, tuned_ir = _tuned_decisions(c, result)
    subs = ir_sites.subprograms(c.ir(["-Xclang", "-disable-llvm-passes"], "front", False))
    frame_of = {sp["function"]: (sp["linkage"] or sp["name"], sp["line"], sp["file"])
                for sp in subs if sp["function"]}
    result.callers = {d.caller for d in decisions} | {
        n for sp in subs for n in (sp["name"], sp["linkage"]) if n}
    groups: dict[tuple, list[ir_sites.Decision]] = {}
    for d in decisions:
        groups.setdefault(d.site, []).append(d)
    wanted = {s for s, ds in groups.items() if any(d.inline != d.default for d in ds)}
    result.departures = sum(d.inline != d.default for d in decisions)
    mixed = {s for s in wanted if len({d.inline for d in groups[s]}) > 1}
    pending = wanted - mixed
    _resolve(groups, pending, ir_sites.parse_calls(tuned_ir), result.lines, frame_of)
    guessed = set()
    for site in list(pending):
        key = ir_sites.own_site_key(groups[site][0], subs)
        if key is not None:
            result.lines[(site[0], site[1], key)] = groups[site][0].inline
            guessed.add(site)
    path = os.path.join(scratch, "lines.txt")
    for _ in range(rounds):
        write_lines(path, result.lines)
        if executable_bytes(c.run(replay_flags(path)[1:], "replay.o", False)) == result.tuned:
            result.exact_alone = True
            break
        ir = c.ir(replay_flags(path)[1:], "replay", tuned=False) if pending else ""
        if not pending or not _resolve(groups, pending, ir_sites.parse_calls(ir),
                                       result.lines, frame_of):
            break
    result.unresolved = len(pending - guessed) + len(mixed)
    if not result.exact_alone:
        result.why = (f"{result.unresolved} of {len(wanted)} departing call sites not keyed"
                      if result.unresolved else "keyed, but the replayed object differs")
    return result


@dataclasses.dataclass
class Merged:
    lines: dict[tuple[str, str, str], bool]
    owners: dict[tuple[str, str, str], set[str]]
    conflicts: int


def merge(results: list[ModuleLines]) -> Merged:
    """All modules' lines in one file; a key answered both ways keeps the answer of the
    module that saves more (the other module is then usually inexact, and says so)."""
    lines: dict[tuple[str, str, str], bool] = {}
    owners: dict[tuple[str, str, str], set[str]] = {}
    best: dict[tuple[str, str, str], float] = {}
    conflicts = 0
    for r in sorted(results, key=lambda r: -r.saving):
        for key, answer in r.lines.items():
            if key in lines and lines[key] != answer:
                conflicts += 1
                continue
            lines[key] = answer
            owners.setdefault(key, set()).add(r.module)
            best.setdefault(key, r.saving)
    return Merged(lines, owners, conflicts)


def _verify(r: ModuleLines, cmd: Command, path: str, scratch: str) -> None:
    c = _Compiler(cmd, "", "", scratch)
    try:
        got = executable_bytes(c.run(replay_flags(path)[1:], "merged.o", False))
    except (RuntimeError, ValueError, OSError) as e:
        r.exact, r.replayed, r.why = False, None, f"with the whole file: {e}"
        return
    r.exact, r.replayed = got == r.tuned, len(got)
    if r.exact:
        r.why = ""
    elif r.exact_alone:
        r.why = "exact alone, not with the other modules' lines"


def _total(results: list[ModuleLines]) -> int:
    return sum(r.replayed if r.replayed is not None else len(r.tuned or b"")
               for r in results)


def _drop_spoilers(merged: Merged, results: list[ModuleLines],
                   verify_all: Callable[[], None]) -> int:
    """A line keyed in a function several modules have (a header's static inline function)
    reaches all of them. Where the whole file makes a module larger than it is alone, the
    other modules' lines for its functions are dropped, and the drop is kept only if the
    build's total executable bytes shrink (each try re-checks every module). Returns how
    many lines were dropped."""
    dropped = 0
    for _ in range(3):
        spoiled = [r for r in results if r.exact_alone and r.replayed is not None
                   and r.tuned is not None and r.replayed > len(r.tuned)]
        drop = {k for r in spoiled for k, who in merged.owners.items()
                if k[0] in r.callers and r.module not in who}
        if not drop:
            break
        before = _total(results)
        kept = {k: (merged.lines[k], merged.owners[k]) for k in drop}
        checks = [(r.exact, r.replayed, r.why) for r in results]
        for key in drop:
            del merged.lines[key], merged.owners[key]
        verify_all()
        if _total(results) >= before:
            for key, (answer, who) in kept.items():
                merged.lines[key], merged.owners[key] = answer, who
            for r, (exact, replayed, why) in zip(results, checks):
                r.exact, r.replayed, r.why = exact, replayed, why
            break
        dropped += len(drop)
    return dropped


def _reference(m: str, cmd: Command, scratch: str) -> ModuleLines:
    """A module the table has no entry for: clang's own object is what the file must keep."""
    r = ModuleLines(m, 0.0)
    c = _Compiler(cmd, "", "", scratch)
    r.callers = {n for sp in ir_sites.subprograms(
        c.ir(["-Xclang", "-disable-llvm-passes"], "front", False))
        for n in (sp["name"], sp["linkage"]) if n}
    r.tuned = executable_bytes(c.run([], "plain.o", False))
    r.exact_alone = True
    return r


def write_replay_file(tuning: str, corpus: str, launcher: str, workers: int = 2,
                      say: Callable[[str], None] = print) -> dict[str, Any]:
    """Writes DIR/inline-replay.{txt,flags,json} for the inlining table in `tuning`, made
    from `corpus` (its compile_commands.json); returns the report's summary. Every module
    of the build is checked with the file: a line keyed in a header's inline function
    reaches every module that includes it."""
    if read_manifest(tuning).get("problem") != "inlining":
        raise ValueError(f"{tuning}: replay files are made for inlining tables only")
    db = os.path.join(corpus, "compile_commands.json")
    if not os.path.isfile(db):
        raise ValueError(f"{db} does not exist: the replay file is made from the build's own "
                         "compiles (a corpus of `mlgo-env corpus build`)")
    cmds = compile_commands(corpus)
    savings: dict[str, float] = {}
    for e in read_entries(tuning):
        savings[e.module] = max(savings.get(e.module, 0.0), e.default_score - e.tuned_score)
    seen = {id(cmds[m]) for m in savings if m in cmds}
    others = sorted(m for m, c in cmds.items()
                    if not os.path.isabs(m) and id(c) not in seen)
    modules = sorted(savings, key=lambda m: -savings[m]) + others
    with tempfile.TemporaryDirectory(prefix="mlgo-replay-") as tmp:
        def one(i_m: tuple[int, str]) -> ModuleLines:
            i, m = i_m
            scratch = os.path.join(tmp, str(i))
            os.makedirs(scratch)
            if m not in cmds:
                return ModuleLines(m, savings[m], why="not in the corpus's compile_commands.json")
            try:
                if m not in savings:
                    return _reference(m, cmds[m], scratch)
                return derive(m, cmds[m], launcher, tuning, savings[m], scratch)
            except (RuntimeError, ValueError, OSError) as e:
                return ModuleLines(m, savings.get(m, 0.0), why=str(e))

        with futures.ThreadPoolExecutor(max(1, workers)) as pool:
            results = list(pool.map(one, enumerate(modules)))
        merged = merge(results)
        path = os.path.join(tuning, "inline-replay.txt")
        checkable = [(i, r) for i, r in enumerate(results) if r.tuned is not None]

        def verify_all(write_only: bool = False) -> None:
            write_lines(path, merged.lines)
            if write_only:
                return
            with futures.ThreadPoolExecutor(max(1, workers)) as pool:
                list(pool.map(lambda ir: _verify(ir[1], cmds[ir[1].module], path,
                                                 os.path.join(tmp, str(ir[0]))), checkable))

        verify_all()
        dropped = _drop_spoilers(merged, [r for _, r in checkable], verify_all)
        verify_all(write_only=True)
    return _report(tuning, path, results, merged, dropped, say)


def _report(tuning: str, path: str, results: list[ModuleLines], merged: Merged, dropped: int,
            say: Callable[[str], None]) -> dict[str, Any]:
    with_lines = [r for r in results if r.lines]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    summary = {
        "sha256": digest,
        "modules": len(results), "modules_with_lines": len(with_lines),
        "lines": len(merged.lines), "conflicts": merged.conflicts, "dropped": dropped,
        "exact": sum(r.exact for r in results),
        "exact_with_lines": sum(r.exact for r in with_lines),
        "failed": sum(r.tuned is None for r in results),
        "tuned_bytes": sum(len(r.tuned) for r in results if r.replayed is not None and r.tuned),
        "replayed_bytes": sum(r.replayed for r in results if r.replayed is not None),
        "flags": replay_flags(path)}
    report = {"summary": summary, "modules": [
        {"module": r.module, "departures": r.departures, "lines": len(r.lines),
         "exact_alone": r.exact_alone, "exact": r.exact, "why": r.why,
         "tuned_bytes": None if r.tuned is None else len(r.tuned),
         "replayed_bytes": r.replayed} for r in results]}
    write_atomic(os.path.join(tuning, "inline-replay.json"), json.dumps(report, indent=1) + "\n")
    write_atomic(os.path.join(tuning, "inline-replay.flags"), " ".join(summary["flags"]) + "\n")
    say(f"inline-replay file {path}: {summary['lines']} lines from {len(with_lines)} modules; "
        f"exact (tuned executable bytes) {summary['exact']} of {len(results)} modules, "
        f"{summary['exact_with_lines']} of {len(with_lines)} with lines; "
        f"{summary['conflicts']} conflicting keys, {dropped} lines dropped, "
        f"{summary['failed']} modules not compiled; executable bytes of the checked modules: "
        f"as tuned {summary['tuned_bytes']}, with the file {summary['replayed_bytes']}")
    for r in results:
        if not r.exact:
            size = "" if r.replayed is None or r.tuned is None else \
                f" ({r.replayed - len(r.tuned):+d} bytes)"
            say(f"  not exact: {r.module}{size}: {r.why or 'the replayed object differs'}")
    say(f"build with: CFLAGS+=' {' '.join(summary['flags'])}' (also CXXFLAGS)")
    return summary


def check_replay_file(tuning: str) -> dict[str, Any]:
    """The summary of DIR/inline-replay.json after checking that DIR/inline-replay.txt is
    the file it describes. TableError naming the file when either is unreadable or the
    text differs (cut, edited)."""
    from .table import TableError
    report, path = (os.path.join(tuning, f"inline-replay.{x}") for x in ("json", "txt"))
    try:
        with open(report) as f:
            summary = json.load(f)["summary"]
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TableError(f"{report} or {path} cannot be read: {e}") from e
    if not isinstance(summary, dict) or summary.get("sha256") != digest:
        raise TableError(f"{path} is not the file tune wrote (its SHA-256 differs from "
                         f"{report}): write it again with python -m mlgo_env.tune replay-file")
    return summary
