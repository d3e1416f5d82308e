"""One module's inline-replay lines: the departures of its tuned decisions, keyed as
clang-22's replay advisor looks call sites up, and checked against the tuned object.

How a module's lines are found (the compile is the corpus's own command, from its
compile_commands.json, run in its directory with its outputs sent to a scratch dir; for a
ThinLTO corpus, its backend's command on its post-import module: thinlto_replay.py):
1. the launcher replays the table's decisions in a compile that also writes the final IR
   and the optimisation record (`-gline-tables-only`: locations; the stream is the same);
   the record's decisions that depart from clang's default are the lines to write;
2. a "no" keeps its call in the final IR, whose debug location is the replay key, inlined-at
   chain included; a call whose caller is gone is keyed from its copies; a "yes" made at the
   caller's own code is keyed from the caller's subprogram; a "yes" inside code inlined
   earlier is found by compiling with the lines so far (the call is then still there),
   until nothing new is found. Copies of one site (one record location, several inlined-at
   chains) answered both ways: each copy left in the final IR was a "no", the others a
   "yes" (_mixed_lines). A "no" whose call later passes merged or deleted is keyed from
   clang's own remark in the compile with the lines so far, which inlined it
   (replay_align);
3. the module compiled with its lines must give the tuned object's executable bytes
   (`exact_alone`); the launcher's tuned object with `-gline-tables-only` is the reference.

The whole build's file is inline_replay.py's. Blocking (runs clang); errors: RuntimeError for
a failed compile, ValueError/OSError naming what is malformed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess

from .._native import load_core
from ..elf import executable_bytes
from . import ir_sites, replay_align
from .table import write_atomic

#: the keys' form (no discriminators: they exist only with profile-directed flags)
FORMAT = "LineColumn"
#: locations for the replay advisor to key calls by; every compile here and the build's use
#: it (any -Rpass=REGEX would give locations too, but the keys are made with this one's names)
LOCATIONS = "-gline-tables-only"


def replay_options(path: str) -> list[str]:
    """The -mllvm options that make clang-22 apply the replay file at `path`."""
    return ["-mllvm", f"-cgscc-inline-replay={os.path.abspath(path)}",
            "-mllvm", f"-cgscc-inline-replay-format={FORMAT}"]


def replay_flags(path: str) -> list[str]:
    """The compile flags a build adds to apply the replay file at `path`."""
    return [LOCATIONS] + replay_options(path)


@dataclasses.dataclass
class Command:
    arguments: list[str]   # compiles the module's source alone: no -o, no dependency files
    directory: str
    #: the module's IR when the compile's input is that IR (a ThinLTO backend's post-import
    #: module): its front IR is this file's text (clang's ThinLTO backend runs its passes
    #: even with -disable-llvm-passes)
    bitcode: str = ""


def compile_commands(corpus: str) -> dict[str, Command]:
    """{module name: its compile} from the corpus's compile_commands.json, read by the
    reader `mlgo-env corpus build` names its modules with (mlgo/corpus/compile_entry.h, in
    mlgo_env._core): any build style it reads (no -o, -ofile, several sources per -c,
    @files, objects outside the entry's directory). A compile of the build that is no module
    of the corpus (an earlier entry wrote its object or name) is keyed by its object's
    absolute path. Raises OSError (unreadable), ValueError (malformed, naming the file),
    ImportError (no _core)."""
    path = os.path.join(corpus, "compile_commands.json")
    with open(path) as f:
        text = f.read()
    out: dict[str, Command] = {}
    for c in load_core().module_compiles(text, path):
        out.setdefault(c["object"] if c["duplicate"] else c["module"],
                       Command(c["arguments"], c["directory"]))
    return out


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
    #: a module without an entry (its reference is clang's own object): compiled only when
    #: a line of the file names one of its functions
    reference: bool = False
    #: no line of the file names one of its functions: with the file it is clang's own
    #: object (the replay advisor leaves unnamed callers to clang), not compiled again
    untouched: bool = False
    #: taken from the writer's cache (replay_cache.py), not found again
    cached: bool = False


class Compiler:
    """Runs one module's compiles in a scratch directory. A compile through the launcher
    writes to SCRATCH/<output stem>/<module>: the launcher tells entries that share a first
    decision apart by the object path's trailing components (libtool's x.o and .libs/x.o)."""

    def __init__(self, cmd: Command, launcher: str, tuning: str, scratch: str,
                 module: str = ""):
        self.cmd, self.launcher, self.tuning, self.scratch = cmd, launcher, tuning, scratch
        self.module = module

    def run(self, extra: list[str], output: str, tuned: bool) -> str:
        argv = list(self.cmd.arguments)
        log = os.path.join(self.scratch, "launch.log")
        if tuned:
            argv = [self.launcher, f"--tuning={self.tuning}", f"--log={log}", "--"] + argv
            if os.path.exists(log):
                os.unlink(log)
        out = os.path.join(self.scratch, output)
        if tuned and self.module:
            out = os.path.join(self.scratch, os.path.splitext(output)[0], self.module)
            os.makedirs(os.path.dirname(out), exist_ok=True)
        r = subprocess.run(argv + [LOCATIONS, "-w", "-o", out] + extra,
                           cwd=self.cmd.directory, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"compile failed ({r.returncode}): {r.stderr.strip()[-400:]}")
        if tuned:
            with open(log) as f:
                lines = f.read().splitlines()
            if not lines:
                raise RuntimeError(f"the launcher wrote no log line to {log}")
            outcome = json.loads(lines[-1])
            if outcome.get("outcome") not in ("tuned", "no-decisions"):
                raise RuntimeError(f"the launcher did not apply the table to this compile "
                                   f"({outcome.get('outcome')}: {outcome.get('why')})")
        return out

    def ir(self, extra: list[str], name: str, tuned: bool) -> str:
        return disassemble(self.run(["-emit-llvm"] + extra, name + ".bc", tuned))

    def front_ir(self) -> str:
        """The module's IR before clang's passes (its subprograms: the callers' names and
        first lines)."""
        if self.cmd.bitcode:
            return disassemble(self.cmd.bitcode)
        return self.ir(["-Xclang", "-disable-llvm-passes"], "front", False)


def disassemble(bitcode: str) -> str:
    """The text of a bitcode file (llvm-dis-22). RuntimeError when it fails."""
    r = subprocess.run(["llvm-dis-22", bitcode, "-o", "-"], capture_output=True, text=True)
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


def _index(calls: list[ir_sites.Call]
           ) -> tuple[dict[tuple, set[str]], dict[tuple, list[ir_sites.Call]]]:
    """The calls' keys by site, and the calls by innermost location (callee included)."""
    by_site: dict[tuple, set[str]] = {}
    by_loc: dict[tuple, list[ir_sites.Call]] = {}
    for c in calls:
        by_site.setdefault(c.site, set()).add(c.key)
        by_loc.setdefault(c.site[1:], []).append(c)
    return by_site, by_loc


def _resolve(groups: dict[tuple, list[ir_sites.Decision]], pending: set[tuple],
             calls: list[ir_sites.Call], lines: dict,
             frame_of: dict[str, tuple[str, int, str]]) -> bool:
    """Keys for the pending groups whose call, or a copy of it, is in `calls`; True if any
    was added."""
    by_site, by_loc = _index(calls)
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


@dataclasses.dataclass
class _Mixed:
    """A site decided both ways: earlier inlining copied its call (one innermost location,
    several inlined-at chains) and the copies were answered differently. The record does not
    say which copy got which answer, the IR does: a copy answered "no" is still in the tuned
    IR (`left`: its keys), a copy answered "yes" is not."""
    left: dict[tuple, set[str]]
    #: the sites with a "yes" against clang's "no": their copies are found in a compile with
    #: the lines so far (still there, not in `left`); per site, how many are still wanted
    wanted_yes: dict[tuple, int]


def _mixed_lines(groups: dict[tuple, list[ir_sites.Decision]], mixed: set[tuple],
                 tuned_calls: list[ir_sites.Call], lines: dict,
                 frame_of: dict[str, tuple[str, int, str]]) -> _Mixed:
    """A "no" line for every copy of a mixed site left in the tuned IR when one of its
    "no"s departs from clang's "yes" (a "yes" that agrees needs no line)."""
    by_site, by_loc = _index(tuned_calls)
    m = _Mixed({}, {})
    for site in mixed:
        m.left[site] = by_site.get(site) or _copied_keys(site, by_loc, frame_of)
        if any(d.default and not d.inline for d in groups[site]):
            for key in m.left[site]:
                lines[(site[0], site[1], key)] = False
        yes = sum(d.inline and not d.default for d in groups[site])
        if yes:
            m.wanted_yes[site] = yes
    return m


def _resolve_mixed_yes(m: _Mixed, calls: list[ir_sites.Call], lines: dict,
                       frame_of: dict[str, tuple[str, int, str]]) -> bool:
    """A "yes" line for each copy of a mixed site in `calls` (a compile with the lines so
    far) that the tuned IR does not have; True if any was added."""
    by_site, by_loc = _index(calls)
    added = False
    for site in list(m.wanted_yes):
        keys = (by_site.get(site) or _copied_keys(site, by_loc, frame_of)) - m.left[site]
        for key in keys:
            if lines.get((site[0], site[1], key)) is None:
                lines[(site[0], site[1], key)] = True
                m.wanted_yes[site] -= 1
                added = True
        if m.wanted_yes[site] <= 0:
            del m.wanted_yes[site]
    return added


def _tuned_decisions(c: Compiler, result: ModuleLines) -> tuple[list[ir_sites.Decision], str]:
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
    c = Compiler(cmd, launcher, tuning, scratch, module)
    decisions, tuned_ir = _tuned_decisions(c, result)
    subs = ir_sites.subprograms(c.front_ir())
    frame_of = {sp["function"]: (sp["linkage"] or sp["name"], sp["line"], sp["file"])
                for sp in subs if sp["function"]}
    result.callers = {d.caller for d in decisions} | {
        n for sp in subs for n in (sp["name"], sp["linkage"], sp["function"]) if n}
    groups: dict[tuple, list[ir_sites.Decision]] = {}
    for d in decisions:
        groups.setdefault(d.site, []).append(d)
    wanted = {s for s, ds in groups.items() if any(d.inline != d.default for d in ds)}
    result.departures = sum(d.inline != d.default for d in decisions)
    mixed = {s for s in wanted if len({d.inline for d in groups[s]}) > 1}
    pending = wanted - mixed
    tuned_calls = ir_sites.parse_calls(tuned_ir)
    _resolve(groups, pending, tuned_calls, result.lines, frame_of)
    split = _mixed_lines(groups, mixed, tuned_calls, result.lines, frame_of)
    guessed = set()
    for site in list(pending):
        key = ir_sites.own_site_key(groups[site][0], subs)
        if key is not None:
            result.lines[(site[0], site[1], key)] = groups[site][0].inline
            guessed.add(site)
    _replay_rounds(c, scratch, result, decisions, groups, pending, split, frame_of, rounds)
    result.unresolved = len(pending - guessed) + len(split.wanted_yes)
    if not result.exact_alone:
        result.why = (f"{result.unresolved} of {len(wanted)} departing call sites not keyed"
                      if result.unresolved else "keyed, but the replayed object differs")
    return result


def _replay_rounds(c: Compiler, scratch: str, result: ModuleLines,
                   decisions: list[ir_sites.Decision],
                   groups: dict[tuple, list[ir_sites.Decision]], pending: set[tuple],
                   split: _Mixed, frame_of: dict[str, tuple[str, int, str]],
                   rounds: int) -> None:
    """Compiles with the lines so far until the object is the tuned one (exact_alone) or no
    more keys are found: a tuned "no" the compile inlined is keyed from clang's remark of it
    (replay_align), a "yes" inside code inlined earlier from the IR (the call is still
    there)."""
    path, record = os.path.join(scratch, "lines.txt"), os.path.join(scratch, "replay.yaml")
    for _ in range(rounds):
        write_lines(path, result.lines)
        got = executable_bytes(c.run(replay_options(path) + [
            "-fsave-optimization-record", f"-foptimization-record-file={record}",
            "-foptimization-record-passes=inline"], "replay.o", False))
        if got == result.tuned:
            result.exact_alone = True
            return
        with open(record) as f:
            remarks = ir_sites.parse_inline_remarks(f.read())
        keyed_no = {(k[0], k[1]) for k, yes in result.lines.items() if not yes}
        found = False
        for d, key in replay_align.inlined_noes(decisions, remarks, keyed_no):
            pending.discard(d.site)
            if (d.caller, d.callee, key) not in result.lines:
                result.lines[(d.caller, d.callee, key)] = False
                found = True
        if pending or split.wanted_yes:
            calls = ir_sites.parse_calls(c.ir(replay_options(path), "replay", tuned=False))
            found = _resolve(groups, pending, calls, result.lines, frame_of) or found
            found = _resolve_mixed_yes(split, calls, result.lines, frame_of) or found
        if not found:
            return
