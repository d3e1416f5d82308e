"""How much of a profiled workload each module's functions carry: the order a regalloc tune
searches in when the corpus was built with an instrumentation profile.

A register-allocation decision changes only what its own function executes, and a function
the workload never runs executes nothing whatever its spills. A tune's budget is wall time,
so with a profile the search should go to the functions that carry the workload first. The
profile says which: ``llvm-profdata show --all-functions --counts`` lists, per function,
its entry count and its block counters; their sum is a function's *weight* (a proxy for the
blocks it executed: counters sit on a spanning tree's complement of the edges, so it is not
an instruction count, but it ranks functions the way the workload runs them).

Front-end profiles count functions before inlining: most of a hot loop's counts sit in the
small static helpers inlined into it. So counts are attributed by where a function was
defined, not by the machine functions the allocator sees: a function with local linkage
is named in the profile with its translation unit's main file (``lz_encoder_mf.c:read64ne``;
the ``-main-file-name`` of the module's cc1 command; an IR-level profile names the source
as the command gave it, ``src/liblzma/lz/lz_encoder_mf.c;read64ne``, and its file name is
what counts), so its counts go to the modules with
that main file (a libtool library's PIC and static objects both); a function the profile
names plainly (external linkage) counts for the modules whose episodes showed it. A
module's weight is the sum, as a share of the profile's total (a scheduling estimate, not
a measurement). Sample profiles (``-fprofile-sample-use``) are not read: their modules get
no weight, and the tune orders them as without a profile.

Blocking: :func:`read_profile_weights` runs llvm-profdata once per profile (seconds for
a large one). Raises nothing: a profile that cannot be read gives no weights (the caller
says so).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Iterable

from .identity import module_args, module_profile_files

_FUNCTION = re.compile(r"^  (\S.*):$")
_COUNT = re.compile(r"^    Function count: (\d+)$")
_BLOCKS = re.compile(r"^    Block counts: \[(.*)\]$")


@dataclass
class ProfileWeights:
    """The profile's counts: per plain (external) function name, per main file (the local
    functions of each translation unit, summed); `total` over the profile (> 0 when usable)."""
    functions: dict[str, int] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def share(self, names: Iterable[str], main_file: str | None) -> float:
        """The share of the profile's counts that a module carries: its main file's local
        functions and the external functions `names` (0..1)."""
        if self.total <= 0:
            return 0.0
        own = sum(self.functions.get(n, 0) for n in set(names))
        return (own + (self.files.get(main_file, 0) if main_file else 0)) / self.total

    def ran(self) -> int:
        """How many functions (external ones, and files with local ones) ran."""
        return sum(1 for c in self.functions.values() if c > 0) + \
            sum(1 for c in self.files.values() if c > 0)


def split_name(profile_name: str) -> tuple[str | None, str]:
    """(main file, name) of a profile's function name: ``file.c:f`` (a front-end profile's)
    or ``dir/file.c;f`` (an IR-level profile's, which names the source as the command gave
    it) names a local function of file.c's translation unit, matched by the file's name
    alone as ``-main-file-name`` gives it; a plain name an external one (mangled C++ names
    carry no ':' or ';'). An Objective-C method's name has colons of its own
    (``-[Foo bar:baz:]``, ``file.m:+[Foo qux:]``): only a file before its ``-[`` / ``+[``
    is split off."""
    starts = [i for i in (profile_name.find("-["), profile_name.find("+[")) if i >= 0]
    if starts:
        method = min(starts)
        file = profile_name[:method]
        if file[-1:] in (";", ":"):
            return os.path.basename(file[:-1]), profile_name[method:]
        return None, profile_name
    for sep in (";", ":"):
        if sep in profile_name:
            file, name = profile_name.rsplit(sep, 1)
            return os.path.basename(file), name
    return None, profile_name


def parse_profile_show(text: str) -> ProfileWeights:
    """The counts in `llvm-profdata show --all-functions --counts` output."""
    weights = ProfileWeights()
    where: tuple[dict[str, int], str] | None = None
    for line in text.splitlines():
        if (m := _FUNCTION.match(line)) is not None:
            file, name = split_name(m.group(1))
            where = (weights.files, file) if file is not None else (weights.functions, name)
            continue
        if where is None:
            continue
        if (m := _COUNT.match(line)) is not None:
            count = int(m.group(1))
        elif (m := _BLOCKS.match(line)) is not None:
            count = sum(int(x) for x in m.group(1).split(",") if x.strip())
        else:
            continue
        table, key = where
        table[key] = table.get(key, 0) + count
        weights.total += count
    return weights


def main_file(corpus: str, module: str) -> str | None:
    """The file name of the ``-main-file-name`` of a corpus module's cc1 command (the name
    its local functions carry in a profile, as :func:`split_name` gives it), or None."""
    args = module_args(corpus, module)
    for i, a in enumerate(args[:-1]):
        if a == "-main-file-name":
            return os.path.basename(args[i + 1])
    return None


def profdata_tool(clang: str | None) -> str | None:
    """llvm-profdata beside the compiler's real path, else llvm-profdata-22 or
    llvm-profdata on PATH; None when none is found."""
    if clang:
        real = os.path.realpath(shutil.which(clang) or clang)
        beside = os.path.join(os.path.dirname(real), "llvm-profdata")
        if os.access(beside, os.X_OK):
            return beside
    return shutil.which("llvm-profdata-22") or shutil.which("llvm-profdata")


def read_profile_weights(path: str, tool: str | None) -> ProfileWeights | None:
    """The weights of the instrumentation profile at `path`; None when it cannot be read."""
    if tool is None:
        return None
    try:
        # names decode as module_args decodes the commands (a file name need not be UTF-8)
        r = subprocess.run([tool, "show", "--all-functions", "--counts", path],
                           capture_output=True, encoding="utf-8", errors="replace", timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    weights = parse_profile_show(r.stdout)
    return weights if weights.total > 0 else None


def corpus_profile(corpus: str, modules: Iterable[str]) -> tuple[str | None, list[str]]:
    """(the instrumentation profile the modules' commands read, [problems]): None when no
    module reads one, or when they read different ones (named in the problems: the tune
    then orders the search as without a profile)."""
    paths: dict[str, str] = {}
    for m in modules:
        instr, _ = module_profile_files(corpus, m)
        if instr is not None:
            paths[os.path.realpath(instr)] = m
    if len(paths) > 1:
        return None, [f"the modules read {len(paths)} different profiles ("
                      + ", ".join(sorted(paths)[:3]) + "): the search is not ordered by one"]
    return (next(iter(paths)) if paths else None), []
