"""The Python twin of the TrainingLogger reader (mlgo_env.trace_log) against the golden logs
of tests/data/traces/golden.json, the expectations protocol/stream_reader_golden_test.cc holds
the C++ reader to: the same headers, records, offsets and tensor bytes, the same errors."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mlgo_env import trace_log
from mlgo_env.trace_log import TraceError, read_header, read_records

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "traces")
with open(os.path.join(GOLDEN, "golden.json")) as f:
    EXPECTED = json.load(f)


def spec_value(spec):
    return None if spec is None else [spec.name, spec.type, list(spec.shape)]


@pytest.mark.parametrize("name", sorted(EXPECTED["logs"]))
def test_reads_every_golden_log_as_recorded(name):
    want = EXPECTED["logs"][name]
    with open(os.path.join(GOLDEN, name), "rb") as f:
        data = f.read()
    header = read_header(data)
    assert [spec_value(s) for s in header.features] == want["features"]
    assert [spec_value(header.score), spec_value(header.advice)] == [want["score"], want["advice"]]
    records = []
    for r in read_records(data, header):
        digest = "" if r.kind == "context" else hashlib.sha256(data[r.body:r.end - 1]).hexdigest()
        records.append([r.kind, r.offset, r.context, r.id, digest[:16]])
        if r.kind == "observation":  # the tensors are the body, cut in header order
            tensors = trace_log.tensors(data, header, r)
            assert b"".join(t.tobytes() for t in tensors.values()) == data[r.body:r.end - 1]
            assert [(t.dtype, t.shape) for t in tensors.values()] == [
                (s.dtype, s.shape) for s in header.features]
    assert records == want["records"]
    observations = list(trace_log.read_observations(os.path.join(GOLDEN, name)))
    assert [c for c, _ in observations] == [r[2] for r in records if r[0] == "observation"]


@pytest.mark.parametrize("name", sorted(EXPECTED["malformed"]))
def test_refuses_every_malformed_log_with_its_error(name):
    path = os.path.join(GOLDEN, name)
    with open(path, "rb") as f:
        data = f.read()
    with pytest.raises(TraceError) as caught:
        list(read_records(data, read_header(data)))
    assert EXPECTED["malformed"][name] in str(caught.value)
    with pytest.raises(TraceError) as named:  # the file readers name the file
        list(trace_log.read_observations(path))
    assert str(named.value) == f"{path}: {caught.value}"


def test_a_trace_reads_as_a_table_of_decisions():
    path = os.path.join(GOLDEN, "inlining.trace")
    trace = trace_log.read_trace(path)
    header = read_header(open(path, "rb").read())
    assert trace.action_name == header.json["action"] == header.features[-1].name
    assert trace.feature_names == [s.name for s in header.features[:-1] if s.shape == (1,)]
    observations = list(trace_log.read_observations(path))
    assert trace.rows.shape == (len(observations), len(trace.feature_names)) and observations
    for row, action, context, (c, values) in zip(trace.rows, trace.actions, trace.contexts,
                                                 observations):
        assert context == c and action == values[trace.action_name][0]
        np.testing.assert_array_equal(row, [values[n][0] for n in trace.feature_names])


def test_reading_traces_needs_no_compiled_core():
    """Why the twin stays (docs/architecture.md): the trace readers import nothing of _core."""
    code = ("import sys, mlgo_env.trace_log, mlgo_env.cluster.trace; "
            "sys.exit('mlgo_env._core' in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, "MLGO_ENV_CORE_DIR": "/nonexistent"})
