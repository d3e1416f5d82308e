"""Which tuned "no"s a compile with the replay file still inlined, and the key of each.

A tuned "no" whose call the final IR no longer has in any form cannot be keyed from the IR:
later passes merged it with an equal call (a readonly callee's call CSE'd with another one)
or deleted it. The compile with the replay file inlines it (clang's own "yes"), and clang's
inliner says so in its optimisation record (pass `inline`) with the call's full replay key
(`at callsite`). The tuned compile's record (pass `inline-ml`) lists the same decisions in
the same order as long as the two compiles agree, so walking both side by side finds each
place the replay compile said "yes" to a tuned "no", with its key.

Two things make the walk more than a zip: a "no" the replay file answered leaves no remark
(clang says nothing of a replayed "no"), and clang reports mandatory answers and calls
without a body that the tuned record leaves out (ir_sites.Remark.asked). Where a step could
be read two ways (a tuned "no" either answered silently by the file, or the replay's
remark at the same site is that decision answered the other way), the reading after which
the two sequences keep agreeing longer is taken. The walk stops where neither reading
continues (the compiles' states differ from there).

Pure functions; no clang here.
"""

from __future__ import annotations

from .ir_sites import Decision, Remark

#: how many steps ahead two readings of an ambiguous step are compared
LOOKAHEAD = 40


def _agree(d: Decision, r: Remark) -> bool:
    return d.site == r.site and d.inline == r.inlined


def _run(decisions: list[Decision], remarks: list[Remark], i: int, j: int) -> int:
    """How many of the next LOOKAHEAD steps from (i, j) agree, reading simply: a tuned "no"
    that meets another site was answered by the file, a remark of a call left alone that
    meets another site is one the tuned record has not. Running out of either sequence
    counts as agreeing to the end."""
    agreed = 0
    for _ in range(LOOKAHEAD):
        if i >= len(decisions) or j >= len(remarks):
            return agreed + LOOKAHEAD
        d, r = decisions[i], remarks[j]
        if _agree(d, r):
            i, j, agreed = i + 1, j + 1, agreed + 1
        elif not d.inline and d.site != r.site:
            i += 1
        elif not r.inlined and d.site != r.site:
            j += 1
        else:
            break
    return agreed


def _readings(d: Decision, r: Remark, i: int, j: int) -> list[tuple[int, int, bool]]:
    """The ways to read step (i, j) where d and r disagree: (next i, next j, whether r keys
    d as a tuned "no" the compile inlined)."""
    out = []
    if d.site == r.site:  # one decision, answered differently
        out.append((i + 1, j + 1, not d.inline and r.inlined and bool(r.key)))
    if not d.inline:  # the file answered d, silently
        out.append((i + 1, j, False))
    if not r.inlined:  # a remark the tuned record has not
        out.append((i, j + 1, False))
    return out


def inlined_noes(decisions: list[Decision], remarks: list[Remark],
                 keyed_no: set[tuple[str, str]]) -> list[tuple[Decision, str]]:
    """The tuned "no"s (`decisions`, the tuned compile's record) that the replay compile
    (`remarks`, its record of pass `inline`) inlined, each with the key its remark names.
    `keyed_no`: the (caller, callee) pairs the replay file already answers "no" somewhere (a
    tie between two readings is then read as such a line's silent answer)."""
    asked = [r for r in remarks if r.asked]
    out: list[tuple[Decision, str]] = []
    i = j = 0
    while i < len(decisions) and j < len(asked):
        d, r = decisions[i], asked[j]
        if _agree(d, r):
            i, j = i + 1, j + 1
            continue
        silent_first = (d.caller, d.callee) in keyed_no
        readings = _readings(d, r, i, j)
        if not readings:
            break
        ranked = [(_run(decisions, asked, a, b), ((a, b) == (i + 1, j)) == silent_first, -n)
                  for n, (a, b, _) in enumerate(readings)]
        n = ranked.index(max(ranked))
        agreed, (i2, j2, keyed) = ranked[n][0], readings[n]
        if keyed:
            out.append((d, r.key))
        if agreed == 0:
            break  # no reading goes on agreeing: the compiles differ from here
        i, j = i2, j2
    return out
