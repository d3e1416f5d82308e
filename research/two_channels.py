#!/usr/bin/python3
"""clang-22 asking eviction and priority questions in one compile: when the two channels of
the greedy register allocator open, how their questions interleave, how they depend on each
other.

    /usr/bin/python3 research/two_channels.py [--source=F.c] [--strace] [--sweep=DIR]

The host (channel_pair.py) makes both fifo pairs as mlgo-env does, starts `clang -O2 -c`
with both channels' flags and answers both from one poll() loop; the order of records is
known from epochs (channel_pair.py), and `--strace` reads clang's own.

Answers: eviction `self` (the last column, evict nothing, when the mask allows it, else the
first allowed column) or `first` (the first allowed column); priority `weight` (weight x
1000) or `size` (li_size), clamped to [0, 2^32) in float32 (NaN: 0).

Printed for the source (default: the demo corpus's sha256.c): the facts of a compile with
both channels (summary()), each function's run-length pattern of questions, each channel
alone, whether one channel's stream changes with the other's answers (never before an answer
differs), whether other answers in one function change other functions. `--sweep=DIR` (e.g.
data/demo_corpus/src): both channels on every C and C++ file of DIR, summed (sweep()).
"""
from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import tempfile

from channel_pair import CLANG, Record, Run, compile_serving, evict_answer, priority_answer

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                      "demo_corpus", "src", "sha256.c")


def questions(run: Run, channel: str) -> int:
    return sum(r.kind == "observation" and r.channel == channel for r in run.records)


def per_function(run: Run) -> dict[str, list[Record]]:
    """Each function's observations (both channels) in clang's order."""
    out: dict[str, list[Record]] = {}
    for r in run.records:
        if r.kind == "observation":
            out.setdefault(r.context, []).append(r)
    return out


def pattern(rows: list[Record]) -> str:
    """Run-length form of a function's questions, e.g. `P12 E3 P2`."""
    runs = itertools.groupby("E" if r.channel == "evict" else "P" for r in rows)
    return " ".join(f"{tag}{len(list(run))}" for tag, run in runs)


def context_order(run: Run) -> dict[str, object]:
    """Per function: which channels wrote its context line, and whether both came in the
    epoch before the function's first question (then: before any of its questions)."""
    ctx: dict[str, dict[str, int]] = {}
    for r in run.records:
        if r.kind == "context":
            ctx.setdefault(r.context, {})[r.channel] = r.epoch
    first = {name: rows[0].epoch for name, rows in per_function(run).items()}
    both = [n for n, c in ctx.items() if len(c) == 2]
    together = [n for n in both if len(set(ctx[n].values())) == 1]
    before = [n for n in both if n in first and max(ctx[n].values()) <= first[n]]
    return {"functions": len(ctx), "on_both": len(both), "same_epoch": len(together),
            "before_first_question": len(before), "with_questions": len(first)}


def divergence(a: Run, b: Run, channel: str) -> dict[str, int]:
    """How `channel`'s stream of each function differs between two runs whose answers
    differ on the other channel: functions compared, those whose `channel` stream differs,
    and those where an observation differed before any answer did (0 = clang's stream is a
    function of the answers)."""
    fa, fb = per_function(a), per_function(b)
    differ = early = 0
    for name in fa.keys() & fb.keys():
        mine = [[r.payload for r in f[name] if r.channel == channel] for f in (fa, fb)]
        differ += mine[0] != mine[1]
        for ra, rb in zip(fa[name], fb[name]):
            if (ra.channel, ra.payload) != (rb.channel, rb.payload):
                early += 1
                break
            if ra.answer != rb.answer:
                break
    return {"functions": len(fa.keys() & fb.keys()), "stream_differs": differ,
            "observation_before_answer_differs": early}


def changed_functions(a: Run, b: Run) -> list[str]:
    """The functions whose questions (both channels) differ between two runs."""
    fa, fb = per_function(a), per_function(b)
    return sorted(n for n in fa.keys() | fb.keys()
                  if [(r.channel, r.payload) for r in fa.get(n, [])] !=
                  [(r.channel, r.payload) for r in fb.get(n, [])])


_STRACE_LINE = re.compile(
    r'(openat|write)\((?:AT_FDCWD<[^>]*>, "([^"]*)"|\d+<([^>]*)>, "((?:[^"\\]|\\.)*))')


def write_order(source: str, clang: str = CLANG) -> list[str]:
    """clang's opens of the object and the fifos and its header and context lines, in its
    own order (read with `strace -f -y`, which must be installed); a run of questions is
    one entry. Blocks; raises FileNotFoundError without strace."""
    with tempfile.TemporaryDirectory(prefix="two-channels-strace-") as tmp:
        log = os.path.join(tmp, "log")
        compile_serving(source, {"evict": evict_answer("self"),
                                 "priority": priority_answer("weight")}, clang,
                        wrap=("strace", "-f", "-y", "-e", "trace=openat,write", "-o", log))
        out: list[str] = []
        with open(log) as f:
            for m in filter(None, map(_STRACE_LINE.search, f)):
                op, path, text = m.group(1), m.group(2) or m.group(3), m.group(4) or ""
                channel = re.search(r"/(evict|priority)\.(in|out)$", path)
                if op == "openat" and path.endswith(".o.tmp"):
                    entry = "open the object"
                elif not channel:
                    continue
                elif op == "openat":
                    entry = "open " + os.path.basename(path)
                else:
                    word = text.split('\\"')[1]  # features, context or observation
                    entry = {"features": "header ", "context": "context "}.get(
                        word, "questions ") + channel.group(1)
                    if word == "context":
                        entry += " " + text.split('\\"')[3]
                if not out or out[-1] != entry:
                    out.append(entry)
    return out


def summary(run: Run) -> dict[str, object]:
    """The facts of one run, as printed."""
    headers = [(r.channel, r.epoch) for r in run.records if r.kind == "header"]
    rows = per_function(run)
    prio_first = sum(1 for f in rows.values() if pattern(f).startswith("P")
                     and any(r.channel == "evict" for r in f))
    mixed = [f for f in rows.values() if len({r.channel for r in f}) == 2]
    return {
        "returncode": run.returncode, "object_is_elf": run.object_ok,
        "headers(channel, epoch)": headers, "open_at_first_question": run.open_at_first_question,
        "questions": {c: questions(run, c) for c in ("evict", "priority")},
        "functions_with_questions": len(rows), "functions_with_both": len(mixed),
        "both_start_with_priority_run": prio_first,
        "channel_switches_in_mixed": sum(pattern(f).count(" ") for f in mixed),
        "contexts": context_order(run), "seconds": round(run.seconds, 2),
    }


def sweep(sources: list[str], clang: str = CLANG) -> dict[str, object]:
    """Both channels (evict nothing, weight x 1000) on every source: how many compile with
    exit 0 and an object, which channel asks each module's first question, how many
    distinct first questions (the key a tuning table files a module under), and the
    functions whose first question is an eviction. Blocks (one compile at a time)."""
    ok, first, firsts, evict_first = 0, {}, set(), []
    for source in sources:
        run = compile_serving(source, {"evict": evict_answer("self"),
                                       "priority": priority_answer("weight")}, clang)
        ok += run.returncode == 0 and run.object_ok
        rows = per_function(run)
        evict_first += [f"{source}:{n}" for n, f in rows.items() if f[0].channel == "evict"]
        if rows:
            head = next(iter(rows.values()))[0]
            first[head.channel] = first.get(head.channel, 0) + 1
            firsts.add(head.payload)
    return {"modules": len(sources), "exit_0_with_object": ok, "first_question": first,
            "distinct_first_questions": len(firsts), "functions_evicting_first": evict_first}


def report(opts: argparse.Namespace) -> None:
    """The compiles and what they show, printed (main's default)."""
    def go(**modes) -> Run:
        make = {"evict": evict_answer, "priority": priority_answer}
        run = compile_serving(opts.source, {c: make[c](*(m if isinstance(m, tuple) else (m,)))
                                            for c, m in modes.items()}, opts.clang)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
        return run

    both = go(evict="self", priority="weight")
    print("both channels (evict=self, priority=weight):")
    for key, value in summary(both).items():
        print(f"  {key}: {value}")
    for name, rows in list(per_function(both).items())[:None if opts.patterns else 12]:
        print(f"  {name}: {pattern(rows)}")
    for label, run in (("priority only (weight)", go(priority="weight")),
                       ("eviction only (self)", go(evict="self"))):
        s = summary(run)
        print(f"{label}: questions {s['questions']}, functions {s['functions_with_questions']},"
              f" exit {s['returncode']}, object {s['object_is_elf']}")
    if opts.strace:
        print("clang's order:", "; ".join(write_order(opts.source, opts.clang)[:16]), "...")
    for label, other, channel in (
            ("priority stream, evict=self vs evict=first", go(evict="first", priority="weight"),
             "priority"),
            ("eviction stream, priority=weight vs priority=size", go(evict="self", priority="size"),
             "evict")):
        print(f"{label}:", divergence(both, other, channel), "questions",
              {c: questions(other, c) for c in ("evict", "priority")})
    target = next((n for n, rows in per_function(both).items()
                   if any(r.channel == "evict" for r in rows)), None)
    if target is not None:
        one = go(evict=("first", target), priority="weight")
        print(f"evict=first in {target} only: functions whose questions changed:",
              changed_functions(both, one))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=SOURCE)
    parser.add_argument("--clang", default=CLANG)
    parser.add_argument("--patterns", action="store_true",
                        help="print every function's pattern (default: the first 12)")
    parser.add_argument("--strace", action="store_true",
                        help="also print clang's order of opens, headers and contexts (strace)")
    parser.add_argument("--sweep", metavar="DIR",
                        help="instead: both channels on every .c/.cpp file of DIR")
    opts = parser.parse_args()
    if opts.sweep:
        names = sorted(n for n in os.listdir(opts.sweep) if n.endswith((".c", ".cpp")))
        print(sweep([os.path.join(opts.sweep, n) for n in names], opts.clang))
    else:
        report(opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
