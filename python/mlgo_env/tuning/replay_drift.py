"""Drift lines: the replay file's tuned decisions kept when the code around a call moves.

A replay key names each frame of a call's inlined-at chain by its function and the line
offset from that function's first line (ir_sites.py). An edit inside a function above a
call moves the offset, and the exact line then misses: its call gets clang's own answer.
Two ways this happens, both seen on pcre2 10.46 -> 10.47 (docs/drift.md):

- the call's own function was edited above it (`parse_regex:951:23` became `:962:23`);
- the function the call was inlined into was edited above the inlined call: the copies'
  keys end with that frame (`convert_glob:106:9 @ pcre2_pattern_convert_8:66:10` became
  `... @ pcre2_pattern_convert_8:74:10`), while the call inside its own function kept its key.

So after the file is exact, each line gets *drift lines*: the same callee and answer, the
key with one frame's line offset moved by d in WINDOW (column and the other frames kept).
They change nothing in the release they were made on, and this is checked, not assumed:

1. a variant key that a call of the checked compile has (a call the file gave an answer,
   inlined or left: `known`) is never written;
2. a variant is written only where it is nearer (in that frame's offset) to its own line
   than to any known call that differs from it only in that frame's offset and got the
   other answer (a shifted call would otherwise take its neighbour's answer);
3. two lines proposing one key with different answers write neither;
4. the modules the drift lines can reach are compiled again with the whole file: a module
   whose object changed loses the drift lines that reach it; if that does not restore every
   object, no drift line is written.

On a later release a drift line can answer a call that is not the tuned one (new code at
the moved offset, same callee and column): an inlining decision changes sizes, never what
the program does. The drift lines kept are remembered (the writer's cache folder,
`drift.json`) with what they were made from: every module's inputs, the exact lines and the
window; the same again takes them without a compile.

Blocking (runs clang); errors: RuntimeError for a failed compile.
"""

from __future__ import annotations

import concurrent.futures as futures
import hashlib
import json
import os
import re
import subprocess
from typing import Any, Callable, Iterable

from ..files import write_atomic
from . import ir_sites
from .replay_lines import LOCATIONS, Command, disassemble, replay_options, write_lines

#: how far (lines: up, down) a frame's offset may move and keep its decision. Code grows
#: more often than it shrinks: of the moved call lines of the functions pcre2 10.46 -> 10.47
#: kept, 91% moved down, and the window holds 91% of them (pcre2 10.45 -> 10.46: 100%, lz4
#: 1.9.4 -> 1.10.0: 95%, xz 5.8.1 -> 5.8.2: 98%; research/line_shifts.py)
WINDOW = (-16, 64)
#: offsets above this are negative ones taken modulo 2**32 (a call before its function's
#: first line): not moved
_MAX_OFFSET = 2**31
#: the file in the writer's cache folder that remembers the last drift lines
DRIFT_KEPT = "drift.json"

Frame = tuple[str, int, int]
Line = tuple[str, str, str]   # caller, callee, key


def split_key(key: str) -> list[Frame]:
    """A replay key's frames, innermost first: (name, line offset, column). ValueError for
    a frame without its two numbers."""
    frames = []
    for text in key.split(" @ "):
        parts = text.rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise ValueError(f"replay key frame '{text}' is not NAME:LINE:COLUMN")
        frames.append((parts[0], int(parts[1]), int(parts[2])))
    return frames


def join_key(frames: Iterable[Frame]) -> str:
    return " @ ".join(f"{n}:{o}:{c}" for n, o, c in frames)


def outermost(key: str) -> str:
    """The name in a key's last frame: the function the call is in when clang asks."""
    return key.split(" @ ")[-1].rsplit(":", 2)[0]


_REMARK = re.compile(r"remark: '(.+?)' inlined into '(.+?)'.* at callsite (.+?); "
                     r"\[-Rpass=inline\]\s*$")


def known_calls(cmd: Command, path: str, scratch: str) -> dict[tuple[str, str], bool]:
    """{(callee, key): inlined} for the calls a compile of the module with the replay file
    at `path` shows: the inlined ones from clang's remarks (`-Rpass=inline`, with their
    keys), the ones left in its final IR. RuntimeError when the compile fails."""
    out = os.path.join(scratch, "drift.bc")
    argv = list(cmd.arguments) + [LOCATIONS, "-w", "-fno-color-diagnostics",
                                  "-Rpass=inline", "-emit-llvm", "-o", out]
    r = subprocess.run(argv + replay_options(path), cwd=cmd.directory, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"compile failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    known: dict[tuple[str, str], bool] = {}
    for c in ir_sites.parse_calls(disassemble(out)):
        known[(c.callee, c.key)] = False
    for line in r.stderr.splitlines():
        m = _REMARK.search(line)
        if m:
            known[(m.group(1), re.sub(r"\.\d+(?=( @ |$))", "", m.group(3)))] = True
    return known


def variants(lines: dict[Line, bool], known: dict[tuple[str, str], bool],
             window: tuple[int, int] = WINDOW) -> dict[Line, bool]:
    """The drift lines of `lines` (rules 1-3 of the module doc) given the `known` calls of
    the module's checked compile. Pure."""
    every = dict(known)
    for (_, callee, key), answer in lines.items():
        every.setdefault((callee, key), answer)
    # per (callee, frames with frame i's offset left out): the offsets and their answers
    near: dict[tuple, list[tuple[int, bool]]] = {}
    parsed = {}
    for (callee, key), answer in every.items():
        try:
            frames = parsed[key] = split_key(key)
        except ValueError:
            continue
        for i, (_, offset, _) in enumerate(frames):
            near.setdefault((callee, i, _blank(frames, i)), []).append((offset, answer))
    proposed: dict[tuple[str, str], tuple[str, set[bool]]] = {}
    for (caller, callee, key), answer in lines.items():
        frames = parsed.get(key)
        for i, (name, offset, column) in enumerate(frames or ()):
            if offset > _MAX_OFFSET:
                continue
            other = [o for o, a in near.get((callee, i, _blank(frames, i)), ()) if a != answer]
            for d in range(window[0], window[1] + 1):
                v = offset + d
                if d == 0 or v < 0 or any(abs(v - o) <= abs(d) for o in other):
                    continue
                moved = join_key(frames[:i] + [(name, v, column)] + frames[i + 1:])
                if (callee, moved) in every:
                    continue
                proposed.setdefault((callee, moved), (caller, set()))[1].add(answer)
    return {(caller, callee, key): answers.pop()
            for (callee, key), (caller, answers) in proposed.items() if len(answers) == 1}


def _blank(frames: list[Frame], i: int) -> tuple:
    return tuple((n, None if j == i else o, c) for j, (n, o, c) in enumerate(frames))


def _reaches(line: Line, callers: set[str]) -> bool:
    return line[0] in callers or outermost(line[2]) in callers


def add_drift_lines(merged: Any, results: list[Any], cmds: dict[str, Command], tmp: str,
                    workers: int, verify_all: Callable[[], None],
                    window: tuple[int, int] = WINDOW, kept: str = "", inputs: str = "") -> int:
    """Adds the drift lines of the exact file `merged` (inline_replay.Merged: its `lines`,
    `owners` and `drift`) and checks them (rules 1-4). `results` are the checked modules
    (replay_lines.ModuleLines after `verify_all`, which writes merged.lines and compiles the
    modules with it); their checks end as the final file's (as the exact file's when no
    drift line is kept, or when they are remembered). Returns how many the file keeps.
    `kept`: a file remembering the last run's drift lines ("": none), valid while `inputs`
    (the modules' inputs, replay_cache.module_key's), the exact lines and the window are
    the same. Blocking; a module whose compile fails gets none."""
    key = hashlib.sha256(json.dumps([inputs, list(window), sorted(
        [c, e, k, a] for (c, e, k), a in merged.lines.items())]).encode()).hexdigest()
    remembered = _remembered(kept, key)
    if remembered is not None:  # checked on the same inputs: changes no object
        for k, a in remembered.items():
            merged.lines[k] = a
            merged.drift.add(k)
        return len(remembered)
    before = [dict(vars(r)) for r in results]
    sources = [r for r in results if r.exact and r.lines and r.module in cmds]
    for k, a in _proposed(merged, sources, cmds, tmp, workers, window).items():
        merged.lines[k] = a
        merged.drift.add(k)
    if merged.drift:
        _check(merged, results, before, verify_all)
    if kept:
        write_atomic(kept, json.dumps({"key": key, "lines": sorted(
            [c, e, k, merged.lines[(c, e, k)]] for c, e, k in merged.drift)}) + "\n")
    return len(merged.drift)


def _proposed(merged: Any, sources: list[Any], cmds: dict[str, Command], tmp: str,
              workers: int, window: tuple[int, int]) -> dict[Line, bool]:
    """Rules 1-3 over the build: each source module's drift lines, from a compile of it with
    the exact file, less the keys the exact file has and those proposed both ways."""
    trial = os.path.join(tmp, "drift-exact.txt")
    write_lines(trial, merged.lines)

    def drift_of(i_r: tuple[int, Any]) -> dict[Line, bool]:
        i, r = i_r
        scratch = os.path.join(tmp, f"drift{i}")
        os.makedirs(scratch, exist_ok=True)
        mine = {k: a for k, a in merged.lines.items() if r.module in merged.owners.get(k, ())}
        try:
            return variants(mine, known_calls(cmds[r.module], trial, scratch), window)
        except (RuntimeError, ValueError, OSError):
            return {}

    with futures.ThreadPoolExecutor(max(1, workers)) as pool:
        found = list(pool.map(drift_of, enumerate(sources)))
    exact_sites = {(k[1], k[2]) for k in merged.lines}
    by_site: dict[tuple[str, str], tuple[Line, set[bool]]] = {}
    for lines in found:
        for k, a in lines.items():
            if (k[1], k[2]) not in exact_sites:
                by_site.setdefault((k[1], k[2]), (k, set()))[1].add(a)
    return {k: answers.pop() for k, answers in by_site.values() if len(answers) == 1}


def _remembered(kept: str, key: str) -> dict[Line, bool] | None:
    """The drift lines `kept` holds for `key`, or None (none kept, another key, unreadable)."""
    try:
        with open(kept) as f:
            v = json.load(f)
        if v["key"] != key:
            return None
        return {(str(c), str(e), str(k)): bool(a) for c, e, k, a in v["lines"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _same(r: Any, before: dict) -> bool:
    """Whether module r's object with the file is what it was with the exact file: exact
    both times (its reference object), or the same size both times when not exact."""
    if r.exact and before["exact"]:
        return True
    return r.exact == before["exact"] and r.replayed == before["replayed"]


def _check(merged: Any, results: list[Any], before: list[dict], verify_all: Callable[[], None]
           ) -> int:
    """Rule 4: compiles with the drift lines and drops those that reach a module whose
    object changed, up to three rounds; if an object still differs, drops them all and puts
    the modules' checks back as they were (`before`). Returns how many are kept."""
    for _ in range(3):
        verify_all()
        changed = [r for r, b in zip(results, before) if not _same(r, b)]
        if not changed:
            return len(merged.drift)  # the modules' checks are the final file's
        callers = set().union(*(r.callers for r in changed))
        for k in [k for k in merged.drift if _reaches(k, callers)]:
            del merged.lines[k]
            merged.drift.discard(k)
        if not merged.drift:
            break
    for k in merged.drift:
        del merged.lines[k]
    merged.drift.clear()
    for r, b in zip(results, before):
        vars(r).update(b)
    return 0
