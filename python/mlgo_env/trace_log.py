"""Reads traces written by ``mlgo-env trace`` (LLVM's TrainingLogger format) into numpy.

    stream      := header record*
    header      := JSON object with "features" (tensor specs, the action last) "\\n"
    record      := {"context":NAME} "\\n"
                 | {"observation":N} "\\n" raw tensors in header order "\\n"
                 | {"outcome":N} "\\n" raw score tensor "\\n"

Tensors are raw little-endian row-major bytes. A truncated or corrupt file raises
TraceError naming the byte offset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator

import numpy as np

_DTYPES = {
    "float": "<f4", "double": "<f8", "int8_t": "i1", "uint8_t": "u1", "int16_t": "<i2",
    "uint16_t": "<u2", "int32_t": "<i4", "uint32_t": "<u4", "int64_t": "<i8", "uint64_t": "<u8",
}


class TraceError(ValueError):
    """The trace stops making sense; the message names the byte offset."""


@dataclass
class Trace:
    header: dict
    feature_names: list[str]        # scalar features, in header order (action excluded)
    action_name: str
    rows: np.ndarray                # [decisions, features] float64
    actions: np.ndarray             # [decisions]
    contexts: list[str]             # per decision


def read_trace(path: str) -> Trace:
    """Reads every decision of a trace: one-element features become columns."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"\n")
    if end < 0:
        raise TraceError(f"{path}: offset 0: no header line")
    try:
        header = json.loads(data[:end])
        specs = header["features"]
        layout = []
        for spec in specs:
            dtype = np.dtype(_DTYPES[spec["type"]])
            count = int(np.prod(spec["shape"])) if spec["shape"] else 1
            layout.append((spec["name"], dtype, count))
    except (ValueError, KeyError, TypeError) as e:
        raise TraceError(f"{path}: offset 0: bad header: {e}") from e
    record_size = sum(d.itemsize * c for _, d, c in layout)
    scalar = [i for i, (_, _, c) in enumerate(layout[:-1]) if c == 1]
    names = [layout[i][0] for i in scalar]
    rows: list[list[float]] = []
    actions: list[float] = []
    contexts: list[str] = []
    context = ""
    pos = end + 1
    score_size = 0
    if "score" in header and header["score"]:
        s = header["score"]
        score_size = np.dtype(_DTYPES[s["type"]]).itemsize * max(1, int(np.prod(s["shape"])))
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            raise TraceError(f"{path}: offset {pos}: truncated record line")
        try:
            rec = json.loads(data[pos:nl])
        except ValueError as e:
            raise TraceError(f"{path}: offset {pos}: not a record line: {e}") from e
        pos = nl + 1
        if "context" in rec:
            context = str(rec["context"])
        elif "observation" in rec:
            if pos + record_size + 1 > len(data):
                raise TraceError(f"{path}: offset {pos}: truncated observation")
            values, at = [], pos
            for _, dtype, count in layout:
                values.append(np.frombuffer(data, dtype, count, at))
                at += dtype.itemsize * count
            rows.append([float(values[i][0]) for i in scalar])
            actions.append(float(values[-1][0]))
            contexts.append(context)
            pos += record_size + 1
        elif "outcome" in rec:
            pos += score_size + 1
        else:
            raise TraceError(f"{path}: offset {pos}: unknown record {rec!r}")
    return Trace(header, names, layout[-1][0],
                 np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names)),
                 np.asarray(actions), contexts)


def read_observations(path: str) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """Every observation of a trace (or any TrainingLogger log) in order, as
    ``(context, {feature: array shaped as its spec})``, every feature of the header
    included (a trace's action last): what a policy's `act` takes. Raises TraceError."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"\n")
    try:
        header = json.loads(data[:end] if end >= 0 else b"")
        layout = [(s["name"], np.dtype(_DTYPES[s["type"]]), list(s["shape"]))
                  for s in header["features"]]
        score = header.get("score") or None
        score_size = (np.dtype(_DTYPES[score["type"]]).itemsize
                      * max(1, int(np.prod(score["shape"])))) if score else 0
    except (ValueError, KeyError, TypeError) as e:
        raise TraceError(f"{path}: offset 0: bad header: {e}") from e
    sizes = [d.itemsize * max(1, int(np.prod(shape))) for _, d, shape in layout]
    context, pos = "", end + 1
    while pos < len(data):
        nl = data.find(b"\n", pos)
        try:
            rec = json.loads(data[pos:nl]) if nl >= 0 else None
        except ValueError:
            rec = None
        if not isinstance(rec, dict):
            raise TraceError(f"{path}: offset {pos}: not a record line")
        pos = nl + 1
        if "context" in rec:
            context = str(rec["context"])
        elif "observation" in rec:
            if pos + sum(sizes) + 1 > len(data):
                raise TraceError(f"{path}: offset {pos}: truncated observation")
            tensors = {}
            for (name, dtype, shape), size in zip(layout, sizes):
                tensors[name] = np.frombuffer(data, dtype, size // dtype.itemsize,
                                              pos).reshape(shape)
                pos += size
            pos += 1
            yield context, tensors
        elif "outcome" in rec:
            pos += score_size + 1
        else:
            raise TraceError(f"{path}: offset {pos}: unknown record {rec!r}")
