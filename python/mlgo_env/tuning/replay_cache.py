"""What the inline-replay writer found per module, kept for its next run in the same tuning
directory: DIR/inline-replay.cache/.

A retune or a second `replay-file` run sees mostly the same modules: finding a tuned
module's lines takes 4-7 compiles, reading an untuned module's function names one. A module
whose inputs are the same as when it was found takes its earlier result instead. The inputs,
hashed into the module's key:

- the writer's own code (this package's replay modules: a new writer finds lines anew);
- the compiler's identity from the table's manifest;
- the module's compile: its arguments (the compile's directory written as `.`, so a tree
  built in another place hits) and what it compiles (source_digest: the front-end bitcode
  with line tables, so a header's code and every call's line count, a comment outside the
  functions does not; a ThinLTO backend's module and index files);
- the module's table entries (their JSON), or none.

Kept per key: the lines, the function names, the counts and the alone check, and the tuned
(or clang's own) executable bytes in a file beside. The whole-file check (`exact`, `replayed`)
is not kept: it depends on every module's lines and runs each time. After a run the cache
holds that run's modules only.

Distinct keys may be read and stored from several threads. A cache file that cannot be
read is a miss, never an error: the module is found again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from typing import Any

from .identity import file_sha256
from .replay_lines import Command, ModuleLines
from ..files import write_atomic

FOLDER = "inline-replay.cache"
#: the writer's source files besides replay_*.py
_WRITER = ("ir_sites.py", "inline_replay.py", "thinlto_replay.py")


@functools.lru_cache(maxsize=1)
def writer_version() -> str:
    """SHA-256 of the writer's source files (as installed: this package's replay_*.py and
    _WRITER)."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    names = sorted(n for n in os.listdir(here)
                   if n in _WRITER or (n.startswith("replay") and n.endswith(".py")))
    for name in names:
        with open(os.path.join(here, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


def source_digest(cmd: Command, scratch: str) -> str | None:
    """What a module's lines are made from, hashed: for a compile of source, its front-end
    bitcode with line tables (`-disable-llvm-passes`, the directory written as `.`), which
    holds every header's code and every call's line and column (a comment added inside a
    function moves the keys after it without changing the optimised code); for a ThinLTO
    backend (IR input), its file arguments and module. None when the compile fails (the
    module is then found anew, and its failure reported there)."""
    if cmd.bitcode:
        files = []
        for a in cmd.arguments + [cmd.bitcode]:
            path = a if os.path.isabs(a) else os.path.join(cmd.directory, a)
            if os.path.isfile(path):
                files.append(file_sha256(path))
        return hashlib.sha256("\0".join(files).encode()).hexdigest()
    out = os.path.join(scratch, "key-front.bc")
    # -gdwarf-4: no MD5 of each file's text in the debug info (DWARF 5 has one), so a
    # comment that moves no code keeps the key
    r = subprocess.run(cmd.arguments + ["-gline-tables-only", "-gdwarf-4",
                                        "-fdebug-compilation-dir=.", "-w", "-emit-llvm",
                                        "-Xclang", "-disable-llvm-passes", "-o", out],
                       cwd=cmd.directory, capture_output=True)
    if r.returncode != 0 or not os.path.isfile(out):
        return None
    digest = file_sha256(out)
    os.unlink(out)
    return digest


def module_key(module: str, cmd: Command, source: str, entries: list[dict[str, Any]],
               clang: Any) -> str:
    """The hex key of a module's inputs (see the module doc); `source`: source_digest()."""
    parts = {
        "writer": writer_version(), "clang": clang, "module": module,
        "arguments": [a.replace(cmd.directory, ".") for a in cmd.arguments],
        "source": source, "entries": entries}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class ReplayCache:
    """DIR/inline-replay.cache of one tuning directory."""

    def __init__(self, tuning: str) -> None:
        self.folder = os.path.join(tuning, FOLDER)

    def load(self, key: str, module: str, saving: float) -> ModuleLines | None:
        """The module's earlier result, or None (no such key, or unreadable)."""
        base = os.path.join(self.folder, key)
        try:
            with open(base + ".json") as f:
                v = json.load(f)
            tuned = None
            if v["has_tuned"]:
                with open(base + ".text", "rb") as f:
                    tuned = f.read()
            r = ModuleLines(module, saving, reference=bool(v["reference"]))
            r.lines = {(c, e, k): bool(a) for c, e, k, a in v["lines"]}
            r.callers = set(v["callers"])
            r.departures, r.unresolved = int(v["departures"]), int(v["unresolved"])
            r.exact_alone, r.why, r.tuned = bool(v["exact_alone"]), str(v["why"]), tuned
            return r
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, key: str, r: ModuleLines) -> None:
        """Keeps a module's result as found (before the whole-file check); a module that
        could not be compiled is not kept. Distinct keys may be stored from several
        threads. OSError when the folder cannot be written."""
        if r.tuned is None and not r.reference:
            return
        if r.tuned is not None:
            write_atomic(os.path.join(self.folder, key + ".text"), r.tuned)
        v = {"reference": r.reference, "has_tuned": r.tuned is not None,
             "lines": [[c, e, k, a] for (c, e, k), a in sorted(r.lines.items())],
             "callers": sorted(r.callers), "departures": r.departures,
             "unresolved": r.unresolved, "exact_alone": r.exact_alone, "why": r.why}
        write_atomic(os.path.join(self.folder, key + ".json"), json.dumps(v) + "\n")

    def store_text(self, key: str, tuned: bytes) -> None:
        """The executable bytes of a kept module (a module without an entry gets them when
        a line reaches it: store() ran before). Its JSON must say so: rewritten."""
        write_atomic(os.path.join(self.folder, key + ".text"), tuned)
        meta = os.path.join(self.folder, key + ".json")
        try:
            with open(meta) as f:
                v = json.load(f)
        except (OSError, ValueError):
            return  # no result kept for the key (or an unreadable one): a miss next time
        if isinstance(v, dict) and not v.get("has_tuned"):
            v["has_tuned"] = True
            write_atomic(meta, json.dumps(v) + "\n")

    def prune(self, keys: set[str]) -> None:
        """Removes every file of a key not in `keys` (the cache holds one run's modules)."""
        if not os.path.isdir(self.folder):
            return
        for name in os.listdir(self.folder):
            path = os.path.join(self.folder, name)
            if name.split(".", 1)[0] not in keys:
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
