"""One compile's interactive channels served by one host (not a script; two_channels.py's):
the fifo pairs made and opened as mlgo-env makes them (include/mlgo/env/compiler_session.h:
a reader of the host's own on B.in, its writer on B.in, its reader on B.out, none blocking),
clang started at -O2 with each channel's flags, and every question answered from one poll()
loop over the channels' B.out.

After a question clang blocks reading that channel's B.in, so before each answer the host
drains every B.out: all read then was written before that question. The answers given so
far are every record's *epoch*: records of different epochs are in clang's order; within an
epoch the channels' headers and contexts are not ordered against each other, and the
question that ends the epoch comes last.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

CLANG = "/usr/bin/clang-22"
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
        self.fds.clear()

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
            out.append(Record(epoch, self.name, "observation", self.context, payload))

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


def serve_command(args: list[str], answers: dict[str, Answer], timeout: float = 120,
                  wrap: tuple[str, ...] = (), nice: bool = True) -> Run:
    """Runs the compile `args` with the channels named in `answers` (`evict`, `priority`),
    answering each question with `answers[channel](features, function)`; `wrap` goes before
    the command (e.g. strace). Blocks until clang exits; past `timeout` raises TimeoutError
    while questions come, subprocess.TimeoutExpired while clang finishes (either way clang's
    process group is killed). Leaves no fifo behind. Run.object_ok is False (the caller
    knows where its object went)."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="two-channels-") as tmp:
        channels = {name: Channel(name, os.path.join(tmp, name)) for name in answers}
        args = list(args)
        with open(os.path.join(tmp, "stderr"), "w+") as err:
            proc = None
            try:  # the fifos' descriptors are closed whatever fails
                for name, ch in channels.items():
                    ch.open()
                    args += ["-mllvm", FLAGS[name][0], "-mllvm", FLAGS[name][1] + ch.base]
                proc = subprocess.Popen([*wrap, *(["nice", "-n", "19"] if nice else []), *args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=err, start_new_session=True)
                records, seen = _serve(proc, channels, answers, start + timeout)
                returncode = proc.wait(max(1.0, start + timeout - time.monotonic()))
            finally:
                if proc is not None and proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                for ch in channels.values():
                    ch.close()
            err.seek(0)
            stderr = err.read()
    return Run(records, returncode, False, seen, time.monotonic() - start, stderr)


def compile_serving(source: str, answers: dict[str, Answer], clang: str = CLANG,
                    timeout: float = 120, wrap: tuple[str, ...] = ()) -> Run:
    """Compiles `source` at -O2 into a temporary object with serve_command; object_ok
    says whether it left an ELF object."""
    with tempfile.TemporaryDirectory(prefix="two-channels-obj-") as tmp:
        obj = os.path.join(tmp, "out.o")
        run = serve_command([clang, "-O2", "-c", source, "-o", obj, "-fno-crash-diagnostics"],
                            answers, timeout, wrap)
        run.object_ok = os.path.isfile(obj) and open(obj, "rb").read(4) == b"\x7fELF"
    return run
