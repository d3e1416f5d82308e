#!/usr/bin/python3
"""How far a release moves the call lines of the functions it keeps: the window of the
replay file's drift lines (python/mlgo_env/tuning/replay_drift.py) read against releases.

    /usr/bin/python3 research/line_shifts.py OLD_TREE NEW_TREE [--window=-16,64]

A replay key holds a call's line as an offset from its function's first line. For every C
source or header both trees have (the same relative path), each function both versions
define (a definition: a name followed by '(' at the start of a line, possibly after its
type, and a '{' at the start of one of the next 30 lines, before any '}': the GNU and K&R
layouts; others are not counted): each of its old lines holding a '(' (a call,
roughly) that difflib's alignment of the two files keeps unchanged is found in the new file,
and its offset from the function's first line compared with the old one. Printed: the lines
counted, the share that moved, and of those the share within the window and the share that
moved down (a later line).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys

_DEFINITION = re.compile(r"^(?:[A-Za-z_][\w\s*]*?[\s*])?((?:PRIV\()?[A-Za-z_]\w*\)?)\s*\(")
_SOURCES = (".c", ".h")


def functions(lines: list[str]) -> list[tuple[int, str]]:
    """(first line, 1-based; name) of each function definition, in order."""
    out = []
    for i, text in enumerate(lines):
        m = _DEFINITION.match(text)
        if not m or text.rstrip().endswith(";") or \
                text.startswith(("if", "while", "for", "return", "switch", "else", "do")):
            continue
        for j in range(i + 1, min(i + 30, len(lines))):
            if lines[j].startswith("{"):
                out.append((i + 1, m.group(1)))
                break
            if lines[j].startswith("}"):
                break
    return out


def shifts(old: list[str], new: list[str]) -> list[tuple[int, int]]:
    """(old offset, new offset - old offset) of each unchanged '(' line of the functions
    both versions of a file define, once each (a name defined twice in a file, under
    #if branches, is left out: which definition is which is not known)."""
    starts, later = functions(old), functions(new)
    names = [n for _, n in starts] + [n for _, n in later]
    twice = {n for n in names if names.count(n) > 2 or
             sum(m == n for _, m in starts) > 1 or sum(m == n for _, m in later) > 1}
    new_start = {name: line for line, name in later if name not in twice}
    same = {}
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            same[block.a + k + 1] = block.b + k + 1
    out = []
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(old) + 1
        if name not in new_start:
            continue
        for line in range(start + 1, end):  # the body: not the definition's own line
            if "(" in old[line - 1] and line in same:
                out.append((line - start, (same[line] - new_start[name]) - (line - start)))
    return out


def tree_shifts(old_tree: str, new_tree: str) -> list[tuple[int, int]]:
    out = []
    for root, _, names in os.walk(old_tree):
        for name in sorted(names):
            if not name.endswith(_SOURCES):
                continue
            rel = os.path.relpath(os.path.join(root, name), old_tree)
            if not os.path.isfile(os.path.join(new_tree, rel)):
                continue
            with open(os.path.join(old_tree, rel), errors="replace") as f:
                old = f.read().splitlines()
            with open(os.path.join(new_tree, rel), errors="replace") as f:
                new = f.read().splitlines()
            out += shifts(old, new)
    return out


def summary(pairs: list[tuple[int, int]], window: tuple[int, int]) -> dict[str, float]:
    moved = [d for _, d in pairs if d]
    return {"lines": len(pairs), "moved": len(moved) / len(pairs) if pairs else 0.0,
            "within": sum(window[0] <= d <= window[1] for d in moved) / len(moved)
            if moved else 1.0,
            "down": sum(d > 0 for d in moved) / len(moved) if moved else 0.0}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--window", default="-16,64", help="BEFORE,AFTER lines (default -16,64)")
    a = p.parse_args(argv)
    for tree in (a.old, a.new):
        if not os.path.isdir(tree):
            p.error(f"{tree} is not a directory")
    lo, hi = (int(x) for x in a.window.split(","))
    s = summary(tree_shifts(a.old, a.new), (lo, hi))
    print(f"{s['lines']} call lines in kept functions; moved {s['moved']:.1%}; of the moved: "
          f"{s['within']:.1%} within {lo:+d}..{hi:+d}, {s['down']:.1%} moved down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
