#!/usr/bin/env python3
"""Reads LLVM's TrainingLogger logs with the package's Python reader
(python/mlgo_env/trace_log.py, the twin of the C++ reader: both follow the format of
include/mlgo/protocol/training_log.h and read the golden logs of tests/data/traces alike),
and checks it against what mlgo-env writes and replays.

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mlgo_env.trace_log import TraceError, read_header, read_records  # noqa: E402


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
        self.header = None
        self.records = []
        self.contexts = []  # names in order of first appearance

    def read(self):
        self.header = read_header(self.data)
        values = lambda spec, at: spec.decode(self.data, at).reshape(-1).tolist()  # noqa: E731
        for r in read_records(self.data, self.header):
            if r.kind == "context" and r.context not in self.contexts:
                self.contexts.append(r.context)
            elif r.kind == "observation":
                features, at = [], r.body
                for spec in self.header.features:
                    features.append((spec.name, values(spec, at)))
                    at += spec.size
                self.records.append(Record(r.context, r.id, features))
            elif r.kind == "outcome":
                self.records[-1].outcome = values(self.header.score, r.body)
        return self


def _offset(error):
    """The byte offset a TraceError names."""
    return int(str(error).split("offset ", 1)[1].split(":", 1)[0])


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
            out.write(f"{reader.header.score.name}: {','.join(str(v) for v in r.outcome)}\n")


def _summary(reader):
    rewards = {}
    for r in reader.records:
        if r.outcome is not None:
            rewards[r.context] = r.outcome[0]
    return {
        "problem": reader.header.json.get("problem", ""),
        "policy": reader.header.json.get("policy", ""),
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
    except TraceError as e:
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
    _check(reader.header.score is not None and reader.header.score.name == "reward",
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
    _check(reader.header.features[-1].name == reader.header.json["action"],
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
    except TraceError as e:
        _check(_offset(e) <= cut, f"{path}: error offset {_offset(e)} past the cut {cut}")
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
