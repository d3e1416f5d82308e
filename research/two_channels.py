#!/usr/bin/python3
"""clang-22 asking eviction and priority questions in one compile: how the two interactive
channels of the greedy register allocator come, interleave and depend on each other.

    /usr/bin/python3 research/two_channels.py [--source=F.c] [--clang=/usr/bin/clang-22]

The host makes both fifo pairs as mlgo-env does (include/mlgo/env/compiler_session.h: a
reader of its own on B.in, its writer on B.in, its reader on B.out, all without blocking),
starts `clang -O2 -c` with both channels' flags and answers both streams from one poll()
loop. clang is single-threaded: after an observation it blocks reading that channel's B.in,
so before each answer the host drains both B.out; everything read then was written before
that observation. The answers given so far number the *epoch* of every record: records of
different epochs are in clang's order; within one epoch the two channels' records (headers,
contexts) are not ordered against each other, the observation that ends the epoch is last.

Eviction answers: `self` (the last column, evict nothing, when its mask bit is 1, else the
first allowed column) or `first` (the first allowed column). Priority answers: `weight`
(weight * 1000) or `size` (li_size), clamped to [0, 2^32) in float32 (NaN: 0).

Printed for the source (default: the demo corpus's sha256.c): each header's epoch, whether
clang held both channels open at its first question, the counts, each function's pattern of
questions, exit and object; each channel alone; whether one channel's stream changes with
the other's answers (and never before an answer differs); whether other answers in one
function change other functions. `--strace`: clang's own order of opens, headers, contexts.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

CLANG = "/usr/bin/clang-22"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                      "demo_corpus", "src", "sha256.c")
FLAGS = {
    "evict": ["-regalloc-enable-advisor=release", "-regalloc-evict-interactive-channel-base="],
    "priority": ["-regalloc-enable-priority-advisor=release",
                 "-regalloc-priority-interactive-channel-base="],
}
_DTYPES = {"int64_t": np.int64, "int32_t": np.int32, "float": np.float32, "double": np.float64,
           "int8_t": np.int8, "uint8_t": np.uint8, "uint64_t": np.uint64}
_FLOAT32_BELOW_2_32 = float(np.nextafter(np.float32(2.0 ** 32), np.float32(0)))


@dataclass
class Record:
    """One record of a channel's stream. `answer` is set for observations."""
    epoch: int
    channel: str
    kind: str  # "header" | "context" | "observation"
    context: str = ""
    index: int = -1
    payload: bytes = b""
    answer: bytes = b""


@dataclass
class Channel:
    """One fifo pair, opened as mlgo-env's host opens it, and its stream parser."""
    name: str
    base: str
    fds: dict[str, int] = field(default_factory=dict)
    buffer: bytearray = field(default_factory=bytearray)
    header: Optional[dict] = None
    context: str = ""
    done: bool = False

    def open(self) -> None:
        """mkfifo B.in, B.out; keep-reader and writer on B.in, reader on B.out. No open
        blocks. Raises OSError."""
        os.mkfifo(self.base + ".in")
        os.mkfifo(self.base + ".out")
        self.fds["keep"] = os.open(self.base + ".in", os.O_RDONLY | os.O_NONBLOCK)
        self.fds["in"] = os.open(self.base + ".in", os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(self.fds["in"], True)
        self.fds["out"] = os.open(self.base + ".out", os.O_RDONLY | os.O_NONBLOCK)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)

    def drain(self) -> bool:
        """Reads what B.out holds without blocking; True when the writer has closed it
        (only meaningful once a header came: before clang opens it a read also gives 0)."""
        while True:
            try:
                chunk = os.read(self.fds["out"], 1 << 20)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            self.buffer += chunk

    def specs(self) -> list[tuple[str, np.dtype, int]]:
        return [(f["name"], np.dtype(_DTYPES[f["type"]]), int(np.prod(f["shape"])))
                for f in self.header["features"]]

    def parse(self, epoch: int) -> list[Record]:
        """The complete records in the buffer, consumed. Raises ValueError on a bad line."""
        out = []
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                return out
            line = json.loads(self.buffer[:end])
            if self.header is None or "context" in line:
                del self.buffer[:end + 1]
                if self.header is None:
                    self.header = line
                self.context = line.get("context", self.context)
                out.append(Record(epoch, self.name, "context" if "context" in line else "header",
                                  self.context))
                continue
            size = sum(t.itemsize * n for _, t, n in self.specs())
            if len(self.buffer) < end + 1 + size + 1:
                return out
            payload = bytes(self.buffer[end + 1:end + 1 + size])
            del self.buffer[:end + 1 + size + 1]
            out.append(Record(epoch, self.name, "observation", self.context,
                              int(line["observation"]), payload))

    def features(self, payload: bytes) -> dict[str, np.ndarray]:
        out, at = {}, 0
        for name, dtype, n in self.specs():
            out[name] = np.frombuffer(payload, dtype, n, at)
            at += dtype.itemsize * n
        return out


Answer = Callable[[dict[str, np.ndarray], str], bytes]


def evict_answer(mode: str, only: Optional[str] = None) -> Answer:
    """`self`: evict nothing when allowed, else the first allowed column; `first`: the first
    allowed column. Both are valid by the mask. With `only`, `mode` holds in that function
    and `self` in the others."""
    def answer(f: dict[str, np.ndarray], context: str) -> bytes:
        allowed = np.flatnonzero(f["mask"] == 1)
        last = f["mask"].size - 1
        mine = mode if only is None or context == only else "self"
        pick = last if (mine == "self" and last in allowed) or not allowed.size else allowed[0]
        return np.int64(pick).tobytes()
    return answer


def priority_answer(mode: str) -> Answer:
    """`weight`: weight * 1000; `size`: li_size; clamped to [0, 2^32) in float32."""
    def answer(f: dict[str, np.ndarray], context: str) -> bytes:
        value = float(f["weight"][0]) * 1000 if mode == "weight" else float(f["li_size"][0])
        value = 0.0 if np.isnan(value) else min(max(value, 0.0), _FLOAT32_BELOW_2_32)
        return np.float32(value).tobytes()
    return answer


@dataclass
class Run:
    """One compile: its records in clang's order (by epoch), exit, whether it left an ELF
    object, which channels clang held open at its first question."""
    records: list[Record]
    returncode: int
    object_ok: bool
    open_at_first_question: dict[str, bool]
    seconds: float
    stderr: str


def _fifos_open(pid: int, channels: dict[str, Channel]) -> dict[str, bool]:
    """Which channels' B.out the process holds open, from /proc (clang runs cc1 in its own
    process; under a `wrap` the wrapper's descriptors are read, and show none)."""
    links = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return {name: ch.base + ".out" in links for name, ch in channels.items()}


def _serve(proc: subprocess.Popen, channels: dict[str, Channel], answers: dict,
           deadline: float) -> tuple[list[Record], dict[str, bool]]:
    """Answers every observation until both streams end. Blocks; raises TimeoutError."""
    records: list[Record] = []
    seen: dict[str, bool] = {}
    epoch = 0
    poller = select.poll()
    for ch in channels.values():
        poller.register(ch.fds["out"], select.POLLIN)
    while not all(ch.done for ch in channels.values()):
        if time.monotonic() > deadline:
            raise TimeoutError("the compile did not finish in time")
        poller.poll(100)
        exited = proc.poll() is not None
        pending = []
        for ch in channels.values():
            if ch.done:
                continue
            closed = ch.drain()
            new = ch.parse(epoch)
            records += new
            pending += [r for r in new if r.kind == "observation"]
            if (closed and ch.header is not None) or (exited and closed):
                ch.done = True
                poller.unregister(ch.fds["out"])
        if len(pending) > 1:
            raise ValueError("two questions pending at once")
        if pending:
            question = pending[0]
            ch = channels[question.channel]
            if not seen:
                seen = _fifos_open(proc.pid, channels)
            question.answer = answers[ch.name](ch.features(question.payload), question.context)
            os.write(ch.fds["in"], question.answer)
            epoch += 1
    return records, seen


def compile_serving(source: str, answers: dict[str, Answer], clang: str = CLANG,
                    timeout: float = 120, wrap: tuple[str, ...] = ()) -> Run:
    """Compiles `source` at -O2 with the channels named in `answers` (`evict`, `priority`),
    answering each question with `answers[channel](features, function)`; `wrap` goes before
    the command (e.g. strace). Blocks until clang exits; raises TimeoutError (clang's
    process group is killed). Leaves nothing behind."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="two-channels-") as tmp:
        channels = {name: Channel(name, os.path.join(tmp, name)) for name in answers}
        args = [clang, "-O2", "-c", source, "-o", os.path.join(tmp, "out.o"),
                "-fno-crash-diagnostics"]
        for name, ch in channels.items():
            ch.open()
            args += ["-mllvm", FLAGS[name][0], "-mllvm", FLAGS[name][1] + ch.base]
        with open(os.path.join(tmp, "stderr"), "w+") as err:
            proc = subprocess.Popen([*wrap, "nice", "-n", "19"] + args, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
            try:
                records, seen = _serve(proc, channels, answers, start + timeout)
                returncode = proc.wait(max(1.0, start + timeout - time.monotonic()))
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                for ch in channels.values():
                    ch.close()
            err.seek(0)
            stderr = err.read()
        obj = os.path.join(tmp, "out.o")
        ok = os.path.isfile(obj) and open(obj, "rb").read(4) == b"\x7fELF"
    return Run(records, returncode, ok, seen, time.monotonic() - start, stderr)


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
    r'^\d+\s+(openat|write)\((?:AT_FDCWD, "([^"]*)"|(\d+), "((?:[^"\\]|\\.)*))')


def write_order(source: str, clang: str = CLANG) -> list[str]:
    """clang's opens of the fifos and its header and context lines, in its own order (read
    with `strace -f`, which must be installed); a run of questions is one entry. Blocks;
    raises FileNotFoundError without strace."""
    with tempfile.TemporaryDirectory(prefix="two-channels-strace-") as tmp:
        log = os.path.join(tmp, "log")
        compile_serving(source, {"evict": evict_answer("self"),
                                 "priority": priority_answer("weight")}, clang,
                        wrap=("strace", "-f", "-e", "trace=openat,write", "-s", "80", "-o", log))
        fds: dict[str, str] = {}
        out: list[str] = []
        with open(log) as f:
            for line in f:
                m = _STRACE_LINE.match(line)
                if not m:
                    continue
                if m.group(2) and m.group(2).endswith(".o.tmp"):
                    out.append("open the object")
                elif m.group(2) and re.search(r"/(evict|priority)\.(in|out)$", m.group(2)):
                    fds[line.rsplit("= ", 1)[1].strip()] = os.path.basename(m.group(2))
                    out.append("open " + os.path.basename(m.group(2)))
                elif m.group(3) in fds:
                    name, text = fds[m.group(3)].split(".")[0], m.group(4)
                    entry = ("header " + name if text.startswith('{\\"features') else
                             "context " + name if text.startswith('{\\"context') else
                             "questions " + name)
                    if text.startswith('{\\"context'):
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=SOURCE)
    parser.add_argument("--clang", default=CLANG)
    parser.add_argument("--patterns", action="store_true",
                        help="print every function's pattern (default: the first 12)")
    parser.add_argument("--strace", action="store_true",
                        help="also print clang's order of opens, headers and contexts (strace)")
    opts = parser.parse_args()

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
    other_evict = go(evict="first", priority="weight")
    print("priority stream, evict=self vs evict=first:",
          divergence(both, other_evict, "priority"), "questions",
          {c: questions(other_evict, c) for c in ("evict", "priority")})
    other_prio = go(evict="self", priority="size")
    print("eviction stream, priority=weight vs priority=size:",
          divergence(both, other_prio, "evict"), "questions",
          {c: questions(other_prio, c) for c in ("evict", "priority")})
    target = next((n for n, rows in per_function(both).items()
                   if any(r.channel == "evict" for r in rows)), None)
    if target is not None:
        one = go(evict=("first", target), priority="weight")
        print(f"evict=first in {target} only: functions whose questions changed:",
              changed_functions(both, one))
    return 0


if __name__ == "__main__":
    sys.exit(main())
