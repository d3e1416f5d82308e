#!/usr/bin/env python3
"""A small, dependency-free reader of LLVM's TrainingLogger format, written
from the format's description (include/mlgo/protocol/training_log.h) alone:

    stream      := header record*
    header      := {"features":[SPEC,...], "score":SPEC?, "advice":SPEC?, ...} "\\n"
    record      := context | observation | outcome
    context     := {"context":NAME} "\\n"
    observation := {"observation":N} "\\n" TENSORS "\\n"
    outcome     := {"outcome":N} "\\n" SCORE "\\n"      (only with "score")

SPEC = {"name":..., "type":..., "port":..., "shape":[...]}; tensors are raw,
little-endian, row-major, product(shape) elements each, features in header
order. Observation ids count 0, 1, ... per context name; an outcome carries
the id of the observation just before it. Other header keys are ignored.

Usage:
    trace_reader.py read FILE [--summary]   print like LLVM's log_reader.py
    trace_reader.py check --mlgo-env EXE    self-test against mlgo-env (ctest)

On a truncated or corrupted file, `read` prints every complete record first,
then the error with its byte offset, and exits with 1.
"""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

_FORMATS = {
    "float": "f", "double": "d", "int8_t": "b", "uint8_t": "B", "int16_t": "h",
    "uint16_t": "H", "int32_t": "i", "uint32_t": "I", "int64_t": "q", "uint64_t": "Q",
}


class TraceFormatError(Exception):
    """The stream stops making sense at byte `offset`."""

    def __init__(self, offset, message):
        super().__init__(f"offset {offset}: {message}")
        self.offset = offset


class Spec:
    def __init__(self, obj, where):
        try:
            self.name = obj["name"]
            self.type = obj["type"]
            self.shape = [int(d) for d in obj["shape"]]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: bad tensor spec {obj!r}") from e
        if self.type not in _FORMATS:
            raise ValueError(f"{where}: unknown element type {self.type!r}")
        self.count = 1
        for d in self.shape:
            if d < 0:
                raise ValueError(f"{where}: negative dimension in {obj!r}")
            self.count *= d
        self.format = "<" + _FORMATS[self.type] * self.count
        self.size = struct.calcsize(self.format)

    def decode(self, data):
        return list(struct.unpack(self.format, data))


class Record:
    """One observation: its context, id, feature values and outcome."""

    def __init__(self, context, observation, features):
        self.context = context
        self.observation = observation
        self.features = features  # [(name, [values])] in header order
        self.outcome = None       # [values] when an outcome followed


class Reader:
    """Reads a whole log; `records` fills as it goes, so after an error it
    holds everything complete before the error."""

    def __init__(self, data):
        self.data = data
        self.pos = 0
        self.header = None
        self.features = []
        self.score = None
        self.records = []
        self.contexts = []  # names in order of first appearance

    def _line(self, what):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise TraceFormatError(self.pos, f"stream ends inside {what}: no newline")
        start, self.pos = self.pos, end + 1
        try:
            return start, json.loads(self.data[start:end])
        except ValueError as e:
            raise TraceFormatError(start, f"{what} is not valid JSON: {e}") from None

    def _bytes(self, size, start, what):
        if self.pos + size + 1 > len(self.data):
            raise TraceFormatError(start, f"stream ends inside {what}: expected {size} bytes "
                                   f"and a newline, have {len(self.data) - self.pos}")
        chunk = self.data[self.pos:self.pos + size]
        if self.data[self.pos + size:self.pos + size + 1] != b"\n":
            raise TraceFormatError(self.pos + size, f"{what}: expected a newline after "
                                   f"{size} bytes of tensor data")
        self.pos += size + 1
        return chunk

    def read(self):
        if not self.data:
            raise TraceFormatError(0, "empty stream: expected a header line")
        start, header = self._line("the header")
        try:
            self.features = [Spec(s, f"feature {i}") for i, s in enumerate(header["features"])]
            self.score = Spec(header["score"], "score") if "score" in header else None
        except (KeyError, TypeError, ValueError) as e:
            raise TraceFormatError(start, f"bad header: {e}") from None
        self.header = header
        context, next_ids, last = None, {}, None
        while self.pos < len(self.data):
            start, event = self._line("a record")
            if not isinstance(event, dict) or len(event) != 1:
                raise TraceFormatError(start, f"unknown record {event!r}")
            if "context" in event:
                context = event["context"]
                if context not in next_ids:
                    next_ids[context] = 0
                    self.contexts.append(context)
                last = None
            elif "observation" in event:
                if context is None:
                    raise TraceFormatError(start, "observation before any context")
                n = event["observation"]
                if n != next_ids[context]:
                    raise TraceFormatError(start, f"observation {n} in context {context!r}, "
                                           f"expected {next_ids[context]}")
                next_ids[context] += 1
                values = []
                size = sum(s.size for s in self.features)
                blob = self._bytes(size, start, f"observation {n}")
                offset = 0
                for s in self.features:
                    values.append((s.name, s.decode(blob[offset:offset + s.size])))
                    offset += s.size
                last = Record(context, n, values)
                self.records.append(last)
            elif "outcome" in event:
                if self.score is None:
                    raise TraceFormatError(start, "outcome in a log without 'score'")
                n = event["outcome"]
                if last is None or last.outcome is not None or last.observation != n:
                    raise TraceFormatError(start, f"outcome {n} does not follow observation {n}")
                last.outcome = self.score.decode(self._bytes(self.score.size, start,
                                                             f"outcome {n}"))
            else:
                raise TraceFormatError(start, f"unknown record {event!r}")
        return self


def _print_text(reader, out):
    last = None
    for r in reader.records:
        if r.context != last:
            out.write(f"context: {r.context}\n")
            last = r.context
        out.write(f"observation: {r.observation}\n")
        for name, values in r.features:
            out.write(f"{name}: {','.join(str(v) for v in values)}\n")
        if r.outcome is not None:
            out.write(f"{reader.score.name}: {','.join(str(v) for v in r.outcome)}\n")


def _summary(reader):
    rewards = {}
    for r in reader.records:
        if r.outcome is not None:
            rewards[r.context] = r.outcome[0]
    return {
        "problem": reader.header.get("problem", ""),
        "policy": reader.header.get("policy", ""),
        "contexts": len(reader.contexts),
        "observations": len(reader.records),
        "outcomes": sum(r.outcome is not None for r in reader.records),
        "context_rewards": rewards,
    }


def cmd_read(args):
    with open(args.file, "rb") as f:
        reader = Reader(f.read())
    error = None
    try:
        reader.read()
    except TraceFormatError as e:
        error = e
    if args.summary:
        if reader.header is not None:
            print(json.dumps(_summary(reader), indent=1, sort_keys=True))
    else:
        _print_text(reader, sys.stdout)
    if error is not None:
        sys.stdout.flush()
        print(f"trace_reader: {args.file}: {error}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------- self-test

def _f32(value):
    """A JSON number or non-finite string as the float32 it came from."""
    return struct.unpack("<f", struct.pack("<f", float(value)))[0]


def _same(a, b):
    """Equal as float32 (NaN equals NaN: clang does send NaN features)."""
    if isinstance(a, float) or isinstance(b, float):
        x, y = _f32(a), _f32(b)
        return x == y or (math.isnan(x) and math.isnan(y))
    return a == b


def _check(condition, message):
    if not condition:
        raise AssertionError(message)


def _cut_point(data):
    """An offset inside the tensor bytes of the log's last observation."""
    line = data.rfind(b'{"observation":')
    return data.find(b"\n", line) + 3


def _check_trace(exe, path):
    data = open(path, "rb").read()
    reader = Reader(data).read()
    _check(reader.score is not None and reader.score.name == "reward",
           f"{path}: no float 'reward' score in the header")
    _check(reader.records, f"{path}: no observations")
    # Outcome records: one per observation, 0 until the last of a context.
    last_index = {r.context: i for i, r in enumerate(reader.records)}
    for i, r in enumerate(reader.records):
        _check(r.outcome is not None, f"{path}: observation {r.observation} of {r.context} "
               "has no outcome")
        if last_index[r.context] != i:
            _check(r.outcome == [0.0], f"{path}: non-zero outcome before the end of "
                   f"{r.context}")
    # The action is the last feature, named in the header.
    _check(reader.features[-1].name == reader.header["action"],
           f"{path}: last feature is not the action")
    # Same values as mlgo-env's own reader.
    exported = json.loads(subprocess.run([exe, "replay", path, "--format=json"], check=True,
                                         capture_output=True, text=True).stdout)
    _check(len(exported["records"]) == len(reader.records),
           f"{path}: {len(reader.records)} records here, {len(exported['records'])} in mlgo-env")
    for ours, theirs in zip(reader.records, exported["records"]):
        _check(ours.context == theirs["context"] and ours.observation == theirs["observation"],
               f"{path}: record order differs at {ours.context}/{ours.observation}")
        for name, values in ours.features:
            _check(all(_same(a, b) for a, b in zip(values, theirs["features"][name])) and
                   len(values) == len(theirs["features"][name]),
                   f"{path}: {ours.context}/{ours.observation} feature {name} differs")
        _check(all(_same(a, b) for a, b in zip(ours.outcome, theirs["outcome"])),
               f"{path}: {ours.context}/{ours.observation} outcome differs")
    # Truncation inside the last observation's tensors: every complete
    # record before it, then the offset.
    cut = _cut_point(data)
    partial = Reader(data[:cut])
    try:
        partial.read()
        raise AssertionError(f"{path}: truncated copy read without error")
    except TraceFormatError as e:
        _check(e.offset <= cut, f"{path}: error offset {e.offset} past the cut {cut}")
    _check(len(partial.records) == len(reader.records) - 1,
           f"{path}: {len(partial.records)} records before the cut, expected "
           f"{len(reader.records) - 1}")
    return reader


def cmd_check(args):
    exe = os.path.abspath(args.mlgo_env)
    scratch = tempfile.mkdtemp(prefix="mlgo-trace-reader-")
    try:
        cases = [("inlining", "sha256.o|codecs.o"), ("regalloc-priority", "sha256.o"),
                 ("regalloc", "codecs.o")]
        for problem, modules in cases:
            path = os.path.join(scratch, problem + ".log")
            subprocess.run([exe, "trace", f"--problem={problem}", f"--module_filter={modules}",
                            f"--output={path}", "--jobs=2", "--no-progress",
                            f"--cache-dir={os.path.join(scratch, 'cache')}"],
                           check=True, capture_output=True)
            reader = _check_trace(exe, path)
            print(f"ok: {problem}: {len(reader.contexts)} contexts, {len(reader.records)} "
                  f"observations with outcomes, same values as mlgo-env replay, truncation "
                  f"reported")
            # mlgo-env replay on a truncated copy: prints the readable part,
            # then the offset, and fails.
            data = open(path, "rb").read()
            cut = _cut_point(data)
            cut_path = path + ".cut"
            with open(cut_path, "wb") as f:
                f.write(data[:cut])
            replay = subprocess.run([exe, "replay", cut_path], capture_output=True, text=True)
            _check(replay.returncode != 0, "mlgo-env replay accepted a truncated trace")
            _check(f"offset {cut}" in replay.stderr,
                   f"mlgo-env replay did not name the offset: {replay.stderr!r}")
            _check(replay.stdout.count("observation: ") == len(reader.records) - 1,
                   "mlgo-env replay did not print every complete record")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    read = sub.add_parser("read", help="print a log")
    read.add_argument("file")
    read.add_argument("--summary", action="store_true")
    check = sub.add_parser("check", help="self-test against mlgo-env")
    check.add_argument("--mlgo-env", required=True)
    args = parser.parse_args()
    try:
        return cmd_read(args) if args.command == "read" else cmd_check(args)
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 1


if __name__ == "__main__":
    sys.exit(main())
