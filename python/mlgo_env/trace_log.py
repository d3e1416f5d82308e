"""Reads LLVM's TrainingLogger format: traces ``mlgo-env trace`` writes, and any training log.

    stream      := header record*
    header      := {"features":[SPEC,...], "score":SPEC?, "advice":SPEC?, ...} "\\n"
    record      := {"context":NAME} "\\n"
                 | {"observation":N} "\\n" raw tensors in header order "\\n"
                 | {"outcome":N} "\\n" raw score tensor "\\n"

Tensors are raw little-endian row-major bytes. The format and the rules a log keeps (ids
count per context name, an outcome follows its observation, ...) are those of
include/mlgo/protocol/training_log.h. This is the Python twin of the C++ reader
(protocol/stream_reader.cc), kept so that what learns from traces (the trainer against a
remote server, the cluster client merging trace shards) runs without the compiled core
(docs/architecture.md); both read the golden logs of tests/data/traces/ alike. A broken log
raises TraceError naming the byte offset in the C++ reader's words.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import numpy as np

from .spaces import NUMPY_DTYPES

_MAX_RECORD_BYTES = 1 << 30  # the C++ reader's limit on an observation or a score


class TraceError(ValueError):
    """The log stops making sense; the message names the byte offset."""


@dataclass(frozen=True)
class Spec:
    """One tensor of the header: name, element type and shape."""
    name: str
    type: str
    shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(NUMPY_DTYPES[self.type])

    @property
    def size(self) -> int:
        """Bytes of the tensor: product(shape) elements."""
        return math.prod(self.shape) * self.dtype.itemsize

    def decode(self, data: bytes, at: int) -> np.ndarray:
        """The tensor at byte `at` of `data`, shaped as the spec (a view, no copy)."""
        return np.frombuffer(data, self.dtype, math.prod(self.shape), at).reshape(self.shape)


@dataclass
class Header:
    json: dict[str, Any]            # the whole header line (trace headers have more keys)
    features: list[Spec]
    score: Optional[Spec]
    advice: Optional[Spec]
    end: int                        # offset of the first record


@dataclass
class Record:
    kind: str                       # "context", "observation" or "outcome"
    offset: int                     # of the record's first byte
    end: int                        # of the byte after the record
    context: str                    # the record's context (its name, for a context record)
    id: int = 0                     # observation and outcome: the observation's id
    body: int = 0                   # observation and outcome: offset of the tensor bytes


def _fail(offset: int, message: str) -> TraceError:
    return TraceError(f"offset {offset}: {message}")


def _integer(value: Any) -> Optional[int]:
    """A JSON integer (or an integral number) as LLVM's JSON reads one; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if isinstance(value, int) or value.is_integer() else None


def _spec(value: Any, where: str) -> Spec:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a JSON object")
    name = value.get("name")
    if not isinstance(name, str):
        raise ValueError(f"{where}: missing string field 'name'")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"{where} '{name}': missing string field 'type'")
    if kind not in NUMPY_DTYPES:
        raise ValueError(f"{where} '{name}': unknown element type '{kind}' "
                         f"(expected one of {', '.join(NUMPY_DTYPES)})")
    port = _integer(value.get("port", 0))
    if port is None or not 0 <= port <= 2**31 - 1:
        raise ValueError(f"{where} '{name}': 'port' must be a small non-negative integer")
    shape = value.get("shape")
    if not isinstance(shape, list):
        raise ValueError(f"{where} '{name}': missing array field 'shape'")
    dims = [_integer(d) for d in shape]
    if any(d is None for d in dims):
        raise ValueError(f"{where} '{name}': shape entries must be integers")
    for i, d in enumerate(dims):
        if d < 0:  # type: ignore[operator]
            raise ValueError(f"{where}: tensor '{name}': dimension {i} is negative ({d})")
    return Spec(name, kind, tuple(dims))  # type: ignore[arg-type]


def read_header(data: bytes) -> Header:
    """The header of the log `data`. Raises TraceError."""
    if not data:
        raise _fail(0, "empty stream: expected a header line")
    end = data.find(b"\n")
    if end < 0:
        raise _fail(len(data), "stream ends inside the header line: expected a newline")
    try:
        obj = json.loads(data[:end])
    except ValueError as e:
        raise _fail(0, f"header: invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise _fail(0, "header: expected a JSON object")
    if not isinstance(obj.get("features"), list):
        raise _fail(0, "header: missing array field 'features'")
    try:
        features = [_spec(s, f"header: feature {i}") for i, s in enumerate(obj["features"])]
        extra = {k: _spec(obj[k], f"header: '{k}'") if k in obj else None
                 for k in ("score", "advice")}
    except ValueError as e:
        raise _fail(0, str(e)) from None
    header = Header(obj, features, extra["score"], extra["advice"], end + 1)
    for what, size in (("an observation", sum(s.size for s in features)),
                       ("the score tensor", header.score.size if header.score else 0)):
        if size > _MAX_RECORD_BYTES:
            raise _fail(0, f"header: {what} would be {size} bytes, over the limit of "
                        f"{_MAX_RECORD_BYTES}")
    return header


def _excerpt(line: bytes) -> str:
    text = "".join(chr(c) if 0x20 <= c < 0x7F else "." for c in line[:40])
    return text + ("..." if len(line) > 40 else "")


def _record_line(line: bytes, start: int) -> tuple[str, Any]:
    """("context", name) | ("observation", id) | ("outcome", id) of a record line."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise _fail(start, "expected a context, observation or outcome record, found "
                    f"'{_excerpt(line)}' (invalid JSON: {e})") from None
    if isinstance(obj, dict) and len(obj) == 1:
        ((key, value),) = obj.items()
        if key == "context" and isinstance(value, str):
            return key, value
        if key in ("observation", "outcome") and _integer(value) is not None:
            return key, _integer(value)
    raise _fail(start, "expected a context, observation or outcome record, found "
                f"'{_excerpt(line)}'")


def read_records(data: bytes, header: Header) -> Iterator[Record]:
    """Every record of the log `data` after its header, in order, checked as the C++ reader
    checks them. Raises TraceError at the first broken one."""
    observation = sum(s.size for s in header.features)
    next_ids: dict[str, int] = {}
    context: Optional[str] = None
    pos, last_observation = header.end, None
    while pos < len(data):
        start, nl = pos, data.find(b"\n", pos)
        if nl < 0:
            raise _fail(len(data), f"stream ends inside a record line "
                        f"('{_excerpt(data[start:])}'): expected a newline")
        kind, value = _record_line(data[start:nl], start)
        pos = nl + 1
        if kind == "context":
            context, last_observation = value, None
            next_ids.setdefault(value, 0)
            yield Record(kind, start, pos, value)
            continue
        if kind == "observation":
            if context is None:
                raise _fail(start, f"observation {value} before any context record")
            if value != next_ids[context]:
                raise _fail(start, f"observation id out of order in context '{context}': "
                            f"expected {next_ids[context]}, found {value}")
            next_ids[context] += 1
            size, last_observation = observation, value
        else:
            if header.score is None:
                raise _fail(start, f"outcome {value} in a stream whose header has no 'score'")
            if last_observation is None:
                raise _fail(start, f"outcome {value} does not follow an observation")
            if value != last_observation:
                raise _fail(start, f"outcome id mismatch in context '{context}': expected "
                            f"{last_observation} (the preceding observation), found {value}")
            size, last_observation = header.score.size, None
        if len(data) - pos <= size or data[pos + size] != 0x0A:
            raise _broken_body(data, pos, size, f"{kind} {value} (context '{context}')")
        yield Record(kind, start, pos + size + 1, context, value, pos)  # type: ignore[arg-type]
        pos += size + 1


def _broken_body(data: bytes, pos: int, size: int, what: str) -> TraceError:
    if len(data) - pos <= size:
        return _fail(len(data), f"stream ends inside {what}: expected {size} bytes of tensor "
                     f"data and a newline, have {len(data) - pos}")
    return _fail(pos + size, f"expected a newline after the {size} bytes of {what}, found "
                 f"byte 0x{data[pos + size]:02x}")


def tensors(data: bytes, header: Header, record: Record) -> dict[str, np.ndarray]:
    """An observation record's tensors by feature name, in header order, each shaped as its
    spec (views into `data`)."""
    out, at = {}, record.body
    for spec in header.features:
        out[spec.name] = spec.decode(data, at)
        at += spec.size
    return out


def _load(path: str) -> tuple[bytes, Header]:
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data, read_header(data)
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None


def _observations(path: str, data: bytes, header: Header
                  ) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    try:
        for record in read_records(data, header):
            if record.kind == "observation":
                yield record.context, tensors(data, header, record)
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None


@dataclass
class Trace:
    header: dict
    feature_names: list[str]        # scalar features, in header order (action excluded)
    action_name: str
    rows: np.ndarray                # [decisions, features] float64
    actions: np.ndarray             # [decisions]
    contexts: list[str]             # per decision


def read_trace(path: str) -> Trace:
    """Reads every decision of a trace (features, the action last): one-element features
    become columns. Reads the whole file; raises TraceError naming the file and offset."""
    data, header = _load(path)
    if not header.features:
        raise TraceError(f"{path}: offset 0: a trace's header names its features, none here")
    columns, at = [], 0  # (name, offset in the observation, dtype): scalars, the action last
    for spec in header.features:
        if math.prod(spec.shape) == 1 or spec is header.features[-1]:
            columns.append((spec.name, at, spec.dtype))
        at += spec.size
    rows, contexts = [], []
    try:
        for r in read_records(data, header):
            if r.kind == "observation":
                rows.append([np.frombuffer(data, d, 1, r.body + o)[0] for _, o, d in columns])
                contexts.append(r.context)
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None
    table = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(columns))
    return Trace(header.json, [name for name, _, _ in columns[:-1]], columns[-1][0],
                 table[:, :-1], table[:, -1], contexts)


def read_observations(path: str) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """Every observation of a trace (or any TrainingLogger log) in order, as
    ``(context, {feature: array shaped as its spec})``, every feature of the header
    included (a trace's action last): what a policy's `act` takes. Reads the whole file;
    raises TraceError naming the file and offset."""
    data, header = _load(path)
    return _observations(path, data, header)
