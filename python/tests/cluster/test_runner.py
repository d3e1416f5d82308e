"""The task-runner contract without clang: failures as values, episodes and what their
deciders recorded, the progress display, the trace splitter's answers to bad input."""

import io
import json
import struct
import threading

import pytest

from mlgo_env.cluster import Failure, InProcessRunner, Progress, TaskFailed, open_runner
from mlgo_env.cluster.runner import _adopt
from mlgo_env.cluster.tasks import check_corpus
from mlgo_env.cluster.trace import split_trace
from mlgo_env.trace_log import TraceError


class StepEnv:
    """Two decisions per module; the module named "bad" fails at reset."""

    made = 0
    lock = threading.Lock()

    def __init__(self):
        with StepEnv.lock:
            StepEnv.made += 1
        self.closed = False
        self.steps = 0

    def reset(self, options):
        if options["module"] == "bad":
            raise RuntimeError("clang crashed on bad")
        self.steps = 0
        return {"x": [1.0]}, {"default_action": 1}

    def step(self, action):
        self.steps += 1
        done = self.steps == 2
        info = {"policy_score": 10.0 + action, "default_score": 11.0} if done else \
            {"default_action": 0}
        return (None if done else {"x": [2.0]}), (0.5 if done else 0.0), done, False, info

    def close(self):
        self.closed = True


class Recorder:
    def __init__(self):
        self.seen = []

    def __call__(self, obs, info):
        self.seen.append(float(obs["x"][0]))
        return 1


def test_failures_are_values_and_the_rest_completes():
    with InProcessRunner(StepEnv, 2) as runner:
        out = runner.map(lambda env, x: 10 // x, [1, 0, 5], ["one", "zero", "five"])
    assert out[0] == 10 and out[2] == 2
    assert isinstance(out[1], Failure) and out[1].label == "zero"
    assert "ZeroDivisionError" in out[1].message
    assert runner.stats.tasks == 2 and runner.stats.failures == 1


def test_play_gives_results_in_order_and_recorders_their_state():
    recorders = [Recorder() for _ in range(4)]
    with InProcessRunner(StepEnv, 2) as runner:
        results = runner.play([(f"m{i}", r) for i, r in enumerate(recorders)])
        assert [r.module for r in results] == ["m0", "m1", "m2", "m3"]
        assert all(r.policy_score == 11.0 and r.steps == 2 for r in results)
        assert all(r.seen == [1.0, 2.0] for r in recorders)
        with pytest.raises(TaskFailed, match=r"1 task\(s\) failed \(bad\).*clang crashed"):
            runner.play([("m0", Recorder()), ("bad", Recorder())])
        outcomes = runner.play_outcomes([("bad", Recorder()), ("m1", Recorder())])
        assert isinstance(outcomes[0], Failure) and outcomes[1].module == "m1"


def test_environments_are_made_lazily_and_replaced_after_a_failure():
    StepEnv.made = 0
    runner = InProcessRunner(StepEnv, 2)
    assert StepEnv.made == 0
    runner.play([("m0", Recorder())])
    assert StepEnv.made == 1
    runner.play_outcomes([("bad", Recorder())])
    runner.play([("m0", Recorder())])
    assert StepEnv.made == 2  # the failed one was closed, not reused
    runner.close()


def test_a_copy_that_played_elsewhere_gives_its_state_back():
    original, played = Recorder(), Recorder()
    played.seen = [3.0]
    _adopt(original, played)
    assert original.seen == [3.0]
    fn = lambda o, i: 1  # noqa: E731 - closures keep nothing to give back
    _adopt(fn, lambda o, i: 0)
    assert fn(None, None) == 1


def test_progress_shows_rate_eta_and_failures():
    out = io.StringIO()
    p = Progress("episodes", out, every_file=0.0)
    p.start(4)
    p.update()
    p.update(failed=True)
    p.finish()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("episodes 1/4, ") and "/s" in lines[0] and "ETA" in lines[0]
    assert lines[-1].startswith("episodes 2/4, ") and lines[-1].endswith("1 failed")
    quiet = io.StringIO()
    q = Progress("episodes", quiet, every_file=60.0)
    q.start(2)
    q.update()
    q.update()
    q.finish()
    assert quiet.getvalue() == ""  # a short batch says nothing


def test_bad_scheduler_names_are_refused():
    with pytest.raises(ValueError, match="expected local or local:N"):
        open_runner("local:x", StepEnv, 1)
    with pytest.raises(ValueError, match="at least 1"):
        open_runner("local:0", StepEnv, 1)
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        open_runner("tcp://127.0.0.1:9", StepEnv, 1, log=None, timeout=1)


def test_corpus_check_names_what_is_missing(tmp_path):
    assert "corpus_description.json" in check_corpus(str(tmp_path))
    (tmp_path / "corpus_description.json").write_text(json.dumps({"modules": ["a.o"]}))
    (tmp_path / "a.o.bc").write_bytes(b"BC")
    assert check_corpus(str(tmp_path)) == f"cannot read {tmp_path}/a.o.cmd"
    (tmp_path / "a.o.cmd").write_text("-O2")
    assert check_corpus(str(tmp_path)) is None


def trace_bytes(contexts):
    header = {"features": [{"name": "f", "port": 0, "shape": [1], "type": "int64_t"},
                           {"name": "a", "port": 0, "shape": [1], "type": "int64_t"}],
              "score": {"name": "reward", "port": 0, "shape": [1], "type": "float"}}
    out = json.dumps(header).encode() + b"\n"
    for name, n in contexts:
        out += json.dumps({"context": name}).encode() + b"\n"
        for i in range(n):
            out += json.dumps({"observation": i}).encode() + b"\n" + struct.pack("<qq", i, 1) + b"\n"
            out += json.dumps({"outcome": i}).encode() + b"\n" + struct.pack("<f", 0.5) + b"\n"
    return out


def test_split_trace_cuts_at_contexts_and_refuses_bad_streams():
    data = trace_bytes([("a.o", 2), ("b.o", 1)])
    header, chunks, observations = split_trace(data)
    assert [c for c, _ in chunks] == ["a.o", "b.o"] and observations == 3
    assert header + b"".join(chunk for _, chunk in chunks) == data
    with pytest.raises(TraceError, match=f"offset {len(data) - 3}: stream ends inside outcome 0"):
        split_trace(data[:-3])
    with pytest.raises(TraceError, match="offset 0: header: missing array field 'features'"):
        split_trace(b'{"features": 1}\n')
    with pytest.raises(TraceError, match="observation 0 before any context"):
        split_trace(data.split(b"\n", 1)[0] + b'\n{"observation": 0}\n' + bytes(16) + b"\n")
