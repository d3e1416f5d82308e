"""How much of a profiled workload each module's functions carry: the order a regalloc tune
searches in when the corpus was built with an instrumentation profile.

A register-allocation decision changes only what its own function executes, and a function
the workload never runs executes nothing whatever its spills. A tune's budget is wall time,
so with a profile the search should go to the functions that carry the workload first. The
profile says which: ``llvm-profdata show --all-functions --counts`` lists, per function,
its entry count and its block counters; their sum is a function's *weight* (a proxy for the
blocks it executed: counters sit on a spanning tree's complement of the edges, so it is not
an instruction count, but it ranks functions the way the workload runs them).

A module's weight is the sum of the weights of the functions its episodes showed (the
contexts the register allocator asked about), as a share of the profile's total; a
function the profile names with a file prefix (``file.c:f`` or ``file.c;f``, local
linkage) counts under its plain name, and a plain name several files define sums theirs (a
scheduling estimate, not a measurement). Sample profiles (``-fprofile-sample-use``) are not
read: their modules get no weight, and the tune orders them as without a profile.

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

from .identity import module_profile_files

_FUNCTION = re.compile(r"^  (\S.*):$")
_COUNT = re.compile(r"^    Function count: (\d+)$")
_BLOCKS = re.compile(r"^    Block counts: \[(.*)\]$")


@dataclass
class ProfileWeights:
    """Per function name, its weight; `total` the sum over the profile (> 0 when usable)."""
    functions: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def share(self, names: Iterable[str]) -> float:
        """The share of the profile's weight that the functions `names` carry (0..1)."""
        if self.total <= 0:
            return 0.0
        return sum(self.functions.get(n, 0) for n in set(names)) / self.total


def plain_name(profile_name: str) -> str:
    """A profile's function name without its file prefix (``dir/file.c:f`` -> ``f``);
    mangled C++ names carry no ':' or ';'."""
    return re.split(r"[:;]", profile_name)[-1] if (":" in profile_name or
                                                  ";" in profile_name) else profile_name


def parse_profile_show(text: str) -> ProfileWeights:
    """The weights in `llvm-profdata show --all-functions --counts` output."""
    weights = ProfileWeights()
    name = None
    for line in text.splitlines():
        if (m := _FUNCTION.match(line)) is not None:
            name = plain_name(m.group(1))
        elif name is not None and (m := _COUNT.match(line)) is not None:
            weights.functions[name] = weights.functions.get(name, 0) + int(m.group(1))
            weights.total += int(m.group(1))
        elif name is not None and (m := _BLOCKS.match(line)) is not None:
            blocks = sum(int(x) for x in m.group(1).split(",") if x.strip())
            weights.functions[name] = weights.functions.get(name, 0) + blocks
            weights.total += blocks
    return weights


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
        r = subprocess.run([tool, "show", "--all-functions", "--counts", path],
                           capture_output=True, text=True, timeout=600)
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
