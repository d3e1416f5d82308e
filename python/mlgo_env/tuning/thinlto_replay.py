"""The inline-replay file of a ThinLTO corpus: the modules are what lld's backends compile.

A ThinLTO corpus (`corpus extract --thinlto_build=local` of a link with
`--save-temps=import`, or `corpus build --thinlto_build=local`) holds each backend's
post-import module (<m>.bc), its index (<m>.thinlto.bc) and the backend's command (the
description's `global_command_override`, a driver command). Its inlining decisions are made
in lld's in-process backends, which read `-mllvm` options given to the link as
`-Wl,-mllvm,...`. So the writer compiles each module with its backend command (the corpus's
own episode compile: `-x ir <m>.bc -fthinlto-index=<m>.thinlto.bc -mllvm
-thinlto-assume-merged`), through the launcher with the table and with stock clang and the
lines, exactly as inline_replay.py does for a build's compiles; the build then applies the
file at its link:

    compile flags (CFLAGS/CXXFLAGS, as at the capture):
        -gline-tables-only -fdebug-compilation-dir=.
    link flags (LDFLAGS, lld):  -Wl,-mllvm,-cgscc-inline-replay=FILE
                                -Wl,-mllvm,-cgscc-inline-replay-format=LineColumn

The keys are debug locations, and a backend module's locations are what its front-end
compile put in the bitcode: the capture and the build must both compile with
`-gline-tables-only` (the flags change no code: the stream, and so the table, is the same).
A corpus captured without it is refused, naming its modules. A line names its caller and
callee by their IR names, and a static function another module imports is renamed
`NAME.llvm.N`, N a hash of its module's bitcode, which holds the compile's directory
with line locations: `-fdebug-compilation-dir=.` makes the bitcode the same in any build
directory. A corpus captured without it gets a warning when such names are in the file
(its lines then apply only to a build made in the capture's directories).

Blocking (llvm-dis-22). Errors: ValueError naming the corpus or module.
"""

from __future__ import annotations

import json
import os
import re
from typing import Iterable

from .replay_lines import FORMAT, LOCATIONS, Command, disassemble


def is_thinlto(corpus: str) -> bool:
    """Whether `corpus` is a ThinLTO corpus (its description says has_thinlto); False for a
    folder without a description (the caller names what it lacks). OSError or ValueError
    when the description cannot be read."""
    path = os.path.join(corpus, "corpus_description.json")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        return bool(json.load(f).get("has_thinlto"))


def backend_commands(corpus: str, clang: str) -> dict[str, Command]:
    """{module: its backend compile} for every module of a ThinLTO corpus, run by `clang`
    in the corpus directory. ValueError when the corpus has no driver backend command (a
    placeholder, none, or a -cc1 command) or a module's bitcode or index is missing."""
    corpus = os.path.abspath(corpus)
    path = os.path.join(corpus, "corpus_description.json")
    with open(path, encoding="utf-8") as f:
        description = json.load(f)
    override = description.get("global_command_override")
    if not isinstance(override, list) or not override or \
            not all(isinstance(a, str) for a in override) or "<UNSPECIFIED>" in override:
        raise ValueError(f"{path}: a ThinLTO corpus needs its backends' command "
                         "(global_command_override; corpus extract --cmd_override)")
    if override[0] == "-cc1":
        raise ValueError(f"{path}: the replay file is made with a driver backend command "
                         "(the one lld's Distributed ThinLTO gives its jobs), not -cc1")
    out: dict[str, Command] = {}
    for m in description.get("modules", []):
        bc, index = (os.path.join(corpus, m + x) for x in (".bc", ".thinlto.bc"))
        for f in (bc, index):
            if not os.path.isfile(f):
                raise ValueError(f"{f} does not exist (module {m} of {corpus})")
        out[m] = Command([clang] + override + ["-x", "ir", bc, f"-fthinlto-index={index}",
                                               "-mllvm", "-thinlto-assume-merged"],
                         corpus, bitcode=bc)
    return out


#: the compile flags of a ThinLTO build (and its capture) that applies a replay file
COMPILE_FLAGS = [LOCATIONS, "-fdebug-compilation-dir=."]
_UNIT = re.compile(r"^![0-9]+ = distinct !DICompileUnit\(.*?\bfile: (![0-9]+)", re.M)


def check_modules(cmds: dict[str, Command], modules: Iterable[str]) -> list[str]:
    """The corpus's `modules` compiled in an absolute directory (their bitcode, and so the
    hash in their promoted locals' names, depends on where the build ran). ValueError naming
    those whose bitcode has no debug line locations (compiled without -gline-tables-only):
    no call site could be keyed."""
    missing, absolute = [], []
    for m in (m for m in modules if m in cmds):
        try:
            text = disassemble(cmds[m].bitcode)
        except RuntimeError as e:
            raise ValueError(f"{cmds[m].bitcode} (module {m}): {e}") from e
        unit = _UNIT.search(text)
        if unit is None:
            missing.append(m)
            continue
        file = re.search(rf"^{unit.group(1)} = !DIFile\(.*?directory: \"([^\"]*)\"", text, re.M)
        if file is not None and os.path.isabs(file.group(1)):
            absolute.append(m)
    if missing:
        raise ValueError(
            f"{len(missing)} module(s) of the ThinLTO corpus carry no line locations "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): the replay "
            f"file's keys are debug locations; capture the build again with "
            f"{' '.join(COMPILE_FLAGS)} in its compile flags, tune, and build with them too")
    return absolute


def promoted(lines: Iterable[tuple[str, str, str]]) -> int:
    """How many of the lines (caller, callee, key) name a promoted local (NAME.llvm.N)."""
    return sum(".llvm." in caller or ".llvm." in callee for caller, callee, _ in lines)


def link_flags(path: str) -> list[str]:
    """The link flags that make lld's in-process ThinLTO backends apply the file at
    `path`."""
    return [f"-Wl,-mllvm,-cgscc-inline-replay={os.path.abspath(path)}",
            f"-Wl,-mllvm,-cgscc-inline-replay-format={FORMAT}"]
