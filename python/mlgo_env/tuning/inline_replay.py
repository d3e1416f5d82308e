"""The inline-replay file: a tuning table's inlining decisions as lines clang-22's own replay
advisor reads, so a build applies them with stock clang and no launcher.

    python -m mlgo_env.tune replay-file --tuning=DIR --corpus=DIR [--workers=2]

writes DIR/inline-replay.txt, DIR/inline-replay.flags (the flags to add to the build's
CFLAGS/CXXFLAGS) and DIR/inline-replay.json (per module: lines, exact or why not; the
file's SHA-256). A ThinLTO corpus's modules are its backends' (thinlto_replay.py): the
file is applied at the link, DIR/inline-replay.ldflags. Each tuned module's lines come from replay_lines.derive; then all go in
one file (a key two modules answer differently keeps the answer of the module that saves
more), and every module the whole file can change is compiled with it and compared again:
the report's `exact` is that last check. A module the file cannot change is not compiled
again: one without an entry that no line reaches (clang-22 replays only the callers a file
names; report: `untouched`), or a tuned one whose reaching lines are exactly its own and
gave its tuned object alone.
Last, each line gets drift lines (replay_drift.py): its key with one frame's line offset
moved a little, the same answer, so an edit above the call in a later version of the code
keeps the decision; the modules they reach are compiled again, and they change no object.

Blocking; runs `workers` compiles at once. Errors: ValueError/OSError naming the file or
module; a module whose compile fails is reported (`why`) and gets no lines.
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from typing import Any, Callable

from ..elf import executable_bytes
from . import ir_sites, thinlto_replay
from .replay_drift import DRIFT_KEPT, WINDOW, add_drift_lines
from .replay_cache import FOLDER, ReplayCache, module_key, source_digest
from .replay_lines import (Command, Compiler, ModuleLines, compile_commands, derive,
                           replay_flags, replay_options, write_lines)
from .table import Entry, TableError, read_entries, read_manifest, write_atomic


@dataclasses.dataclass
class Merged:
    lines: dict[tuple[str, str, str], bool]
    owners: dict[tuple[str, str, str], set[str]]
    conflicts: int
    #: the keys of `lines` that are drift lines (replay_drift.py), not tuned decisions
    drift: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)


def merge(results: list[ModuleLines]) -> Merged:
    """All modules' lines in one file. clang looks a call up by callee and key alone (the
    caller only says which functions are replayed), so a (callee, key) answered both ways,
    by any callers, keeps the answer of the module that saves more (the other module is
    then usually inexact, and says so)."""
    lines: dict[tuple[str, str, str], bool] = {}
    owners: dict[tuple[str, str, str], set[str]] = {}
    answer_of: dict[tuple[str, str], bool] = {}
    conflicts = 0
    for r in sorted(results, key=lambda r: -r.saving):
        for key, answer in r.lines.items():
            site = (key[1], key[2])
            if answer_of.setdefault(site, answer) != answer:
                conflicts += 1
                continue
            lines[key] = answer
            owners.setdefault(key, set()).add(r.module)
    return Merged(lines, owners, conflicts)


def _reaching(merged: Merged, r: ModuleLines) -> dict[tuple[str, str, str], bool]:
    """The file's lines that can change module `r`: clang-22 replays only the callers the
    file names (its default scope) and looks a call up by callee and key, whose outermost
    frame is the replayed function's own (short) name. So a line reaches r when its caller
    or its key's outermost frame is one of r's functions' names."""
    return {k: a for k, a in merged.lines.items()
            if k[0] in r.callers or k[2].split(" @ ")[-1].rsplit(":", 2)[0] in r.callers}


def _settled(merged: Merged, r: ModuleLines) -> bool:
    """Settles r without a compile where the file cannot change what r already knows: no
    line reaches it (untouched: clang's own object), or the lines that reach it are its own
    and gave the tuned object alone. False: r must be compiled with the whole file."""
    mine = _reaching(merged, r)
    r.untouched = not mine
    if r.untouched and r.reference:
        r.exact, r.why = True, ""
        r.replayed = None if r.tuned is None else len(r.tuned)
        return True
    if r.exact_alone and not r.reference and mine == r.lines and r.tuned is not None:
        r.exact, r.replayed, r.why = True, len(r.tuned), ""
        return True
    return False


def _verify(r: ModuleLines, cmd: Command, path: str, scratch: str) -> None:
    c = Compiler(cmd, "", "", scratch)
    try:
        if r.tuned is None:  # a reference module a line reaches: clang's own object first
            r.tuned = executable_bytes(c.run([], "plain.o", False))
        got = executable_bytes(c.run(replay_options(path), "merged.o", False))
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
        checks = [(r.exact, r.replayed, r.why, r.untouched) for r in results]
        for key in drop:
            del merged.lines[key], merged.owners[key]
        verify_all()
        if _total(results) >= before:
            for key, (answer, who) in kept.items():
                merged.lines[key], merged.owners[key] = answer, who
            for r, (exact, replayed, why, untouched) in zip(results, checks):
                r.exact, r.replayed, r.why, r.untouched = exact, replayed, why, untouched
            break
        dropped += len(drop)
    return dropped


def _reference(m: str, cmd: Command, scratch: str) -> ModuleLines:
    """A module the table has no entry for: clang's own object is what the file must keep.
    Only its functions' names are read here (the front IR); its object is compiled when a
    line of the file reaches it (_verify)."""
    r = ModuleLines(m, 0.0, reference=True)
    c = Compiler(cmd, "", "", scratch)
    r.callers = {n for sp in ir_sites.subprograms(c.front_ir())
                 for n in (sp["name"], sp["linkage"], sp["function"]) if n}
    r.exact_alone = True
    return r


def _build_modules(tuning: str, corpus: str, manifest: dict[str, Any], table: list[Entry]
                   ) -> tuple[dict[str, Command], dict[str, float], list[str], list[str] | None]:
    """The build's compiles (a ThinLTO corpus: its backends'), each tuned module's saving,
    every module to check (the tuned ones, largest saving first, then the others), and for
    a ThinLTO corpus the tuned modules compiled in an absolute directory (else None).
    `manifest` and `table`: the tuning directory's, as read."""
    if manifest.get("problem") != "inlining":
        raise ValueError(f"{tuning}: replay files are made for inlining tables only")
    for tool in ("llvm-dis-22",):
        if shutil.which(tool) is None:
            raise ValueError(f"{tool} is not on PATH (Debian's llvm-22 package has it)")
    savings: dict[str, float] = {}
    for e in table:
        savings[e.module] = max(savings.get(e.module, 0.0), e.default_score - e.tuned_score)
    db, absolute = os.path.join(corpus, "compile_commands.json"), None
    if thinlto_replay.is_thinlto(corpus):
        cmds = thinlto_replay.backend_commands(corpus, manifest["clang"]["path"])
        absolute = thinlto_replay.check_modules(cmds, savings)
    elif not os.path.isfile(db):
        raise ValueError(f"{db} does not exist: the replay file is made from the build's own "
                         "compiles (a corpus of `mlgo-env corpus build`) or a ThinLTO "
                         "corpus's backends")
    else:
        cmds = compile_commands(corpus)
    others = sorted((m for m in cmds if m not in savings), key=lambda m: (os.path.isabs(m), m))
    return cmds, savings, sorted(savings, key=lambda m: -savings[m]) + others, absolute


def write_replay_file(tuning: str, corpus: str, launcher: str, workers: int = 2,
                      say: Callable[[str], None] = print,
                      drift_window: tuple[int, int] | None = WINDOW) -> dict[str, Any]:
    """Writes DIR/inline-replay.{txt,flags,json} for the inlining table in `tuning`, made
    from `corpus` (its compile_commands.json); returns the report's summary. Every module
    of the build is checked with the file: a line keyed in a header's inline function
    reaches every module that includes it. Then each line gets its drift lines (moved keys
    within `drift_window`, replay_drift.py; None: none), checked to change no object."""
    if not (os.path.isfile(launcher) and os.access(launcher, os.X_OK)):
        raise ValueError(f"the launcher '{launcher}' is not an executable file")
    tuning = os.path.abspath(tuning)  # the compiles run in their own directories
    manifest, table = read_manifest(tuning), read_entries(tuning)
    cmds, savings, modules, thinlto = _build_modules(tuning, corpus, manifest, table)
    cache, keys = ReplayCache(tuning), {}
    entries: dict[str, list[dict[str, Any]]] = {}
    for e in table:
        entries.setdefault(e.module, []).append(e.to_json())
    clang = manifest.get("clang")
    with tempfile.TemporaryDirectory(prefix="mlgo-replay-") as tmp:
        def one(i_m: tuple[int, str]) -> ModuleLines:
            i, m = i_m
            scratch = os.path.join(tmp, str(i))
            os.makedirs(scratch)
            if m not in cmds:
                return ModuleLines(m, savings[m], why="not a module of the corpus's build")
            try:
                source = source_digest(cmds[m], scratch)
                if source is not None:
                    keys[m] = module_key(m, cmds[m], source, sorted(entries.get(m, []),
                                                                     key=json.dumps), clang)
                    r = cache.load(keys[m], m, savings.get(m, 0.0))
                    if r is not None:
                        r.cached = True
                        return r
                r = _reference(m, cmds[m], scratch) if m not in savings else \
                    derive(m, cmds[m], launcher, tuning, savings[m], scratch)
                if m in keys:
                    cache.store(keys[m], r)
                return r
            except (RuntimeError, ValueError, OSError) as e:
                return ModuleLines(m, savings.get(m, 0.0), why=str(e))

        with futures.ThreadPoolExecutor(max(1, workers)) as pool:
            results = list(pool.map(one, enumerate(modules)))
        merged = merge(results)
        trial = os.path.join(tmp, "inline-replay.txt")  # the file as checked
        checkable = [(i, r) for i, r in enumerate(results) if r.tuned is not None or
                     (r.reference and not r.why)]
        if savings and not any(r.tuned is not None for r in results if r.module in savings):
            raise ValueError("no tuned module could be compiled: "
                             + next(r.why for r in results if r.module in savings))

        def verify_all() -> None:
            write_lines(trial, merged.lines)
            todo = [(i, r) for i, r in checkable if not _settled(merged, r)]
            with futures.ThreadPoolExecutor(max(1, workers)) as pool:
                list(pool.map(lambda ir: _verify(ir[1], cmds[ir[1].module], trial,
                                                 os.path.join(tmp, str(ir[0]))), todo))

        verify_all()
        dropped = _drop_spoilers(merged, [r for _, r in checkable], verify_all)
        if drift_window is not None:
            add_drift_lines(merged, [r for _, r in checkable], cmds, tmp, workers, verify_all,
                            drift_window, os.path.join(cache.folder, DRIFT_KEPT),
                            json.dumps(sorted(keys.items())))
        path = os.path.join(tuning, "inline-replay.txt")
        write_lines(path, merged.lines)
        for r in results:  # clang's own objects compiled in the check
            if r.reference and r.tuned is not None and r.module in keys:
                cache.store_text(keys[r.module], r.tuned)
        cache.prune(set(keys.values()) | {DRIFT_KEPT.split(".")[0]})
    return _report(tuning, path, results, merged, dropped, say, thinlto)


def _report(tuning: str, path: str, results: list[ModuleLines], merged: Merged, dropped: int,
            say: Callable[[str], None], thinlto: list[str] | None = None) -> dict[str, Any]:
    """Writes the report and the flags files; `thinlto`: check_modules' answer, or None."""
    with_lines = [r for r in results if r.lines]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    summary = {
        "sha256": digest, "table_sha256": table_digest(tuning),
        "modules": len(results), "modules_with_lines": len(with_lines),
        "lines": len(merged.lines) - len(merged.drift), "drift_lines": len(merged.drift),
        "conflicts": merged.conflicts, "dropped": dropped,
        "exact": sum(r.exact for r in results),
        "exact_with_lines": sum(r.exact for r in with_lines),
        "failed": sum(r.tuned is None and not (r.untouched and r.reference)
                      for r in results),
        "untouched": sum(r.untouched and r.reference for r in results),
        "reused": sum(r.cached for r in results),
        "tuned_bytes": sum(len(r.tuned) for r in results if r.replayed is not None and r.tuned),
        "replayed_bytes": sum(r.replayed for r in results if r.replayed is not None),
        "flags": replay_flags(path), "thinlto": thinlto is not None}
    if thinlto is not None:  # the compiles need the locations; lld's backends read the file
        summary["flags"] = thinlto_replay.COMPILE_FLAGS
        summary["ldflags"] = thinlto_replay.link_flags(path)
        summary["promoted_lines"] = thinlto_replay.promoted(
            k for k in merged.lines if k not in merged.drift)
    report = {"summary": summary, "modules": [
        {"module": r.module, "departures": r.departures, "lines": len(r.lines),
         "exact_alone": r.exact_alone, "exact": r.exact, "why": r.why,
         "untouched": r.untouched,
         "tuned_bytes": None if r.tuned is None else len(r.tuned),
         "replayed_bytes": r.replayed} for r in results]}
    write_atomic(os.path.join(tuning, "inline-replay.json"), json.dumps(report, indent=1) + "\n")
    write_atomic(os.path.join(tuning, "inline-replay.flags"), " ".join(summary["flags"]) + "\n")
    ldflags = os.path.join(tuning, "inline-replay.ldflags")
    if thinlto is not None:
        write_atomic(ldflags, " ".join(summary["ldflags"]) + "\n")
    elif os.path.exists(ldflags):  # a ThinLTO file written here before
        os.unlink(ldflags)
    say(f"inline-replay file {path}: {summary['lines']} lines from {len(with_lines)} modules "
        f"and {summary['drift_lines']} drift lines (the same answers where a later edit moves "
        "a call by a few lines; they change no object here); "
        f"exact (tuned executable bytes) {summary['exact']} of {len(results)} modules, "
        f"{summary['exact_with_lines']} of {len(with_lines)} with lines; "
        f"{summary['conflicts']} conflicting keys, {dropped} lines dropped, "
        f"{summary['failed']} modules not compiled, {summary['untouched']} without an entry "
        "that no line reaches (clang's own objects, not compiled again), "
        f"{summary['reused']} found as in the last run ({os.path.join(tuning, FOLDER)}); "
        "executable bytes of the checked modules: "
        f"as tuned {summary['tuned_bytes']}, with the file {summary['replayed_bytes']}")
    for r in results:
        if not r.exact:
            size = "" if r.replayed is None or r.tuned is None else \
                f" ({r.replayed - len(r.tuned):+d} bytes)"
            say(f"  not exact: {r.module}{size}: {r.why or 'the replayed object differs'}")
    say(f"build with: CFLAGS+=' {' '.join(summary['flags'])}' (also CXXFLAGS)" +
        (f", LDFLAGS+=' {' '.join(summary['ldflags'])}' (lld's ThinLTO backends read it)"
         if thinlto is not None else ""))
    if thinlto and summary["promoted_lines"]:
        say(f"warning: {summary['promoted_lines']} lines name a static function another module "
            f"imports (NAME.llvm.N, N a hash of its module's bitcode), and {len(thinlto)} tuned "
            f"modules were compiled with an absolute debug directory ({thinlto[0]}, ...): "
            "those lines apply only to a build made in the capture's directories; capture "
            f"with {' '.join(thinlto_replay.COMPILE_FLAGS)} to apply them anywhere")
    return summary


def table_digest(tuning: str) -> str:
    """SHA-256 over the table's entry files (names and bytes): what a replay file was made
    from."""
    h = hashlib.sha256()
    folder = os.path.join(tuning, "modules")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def check_replay_file(tuning: str) -> dict[str, Any]:
    """The summary of DIR/inline-replay.json after checking that DIR/inline-replay.txt is
    the file it describes. TableError naming the file when either is unreadable or the
    text differs (cut, edited)."""
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
    if summary.get("table_sha256") != table_digest(tuning):
        raise TableError(f"{path} was made from another table than {tuning}/modules now holds: "
                         "write it again with python -m mlgo_env.tune replay-file")
    return summary
