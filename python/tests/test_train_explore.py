"""The trainer does not idle: when the replay cache answers a whole round (no decision
moved), the method widens its step and compiles keep coming (real clang-22, the -Oz demo
corpus, a half-minute budget, --method=es)."""

import json
import subprocess

import pytest

from test_train import demo_corpus, run_module


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    exe, corpus = demo_corpus()
    out = tmp_path_factory.mktemp("explore")
    policy = out / "policy.json"
    # The default trace first, outside the budget (on a busy machine it could eat it).
    trace = out / "default.trace.log"
    subprocess.run([exe, "trace", "--problem=inlining", f"--corpus={corpus}",
                    f"--output={trace}", "--jobs=2", "--seed=5", "--sampling-rate=0.5",
                    "--no-progress", f"--cache-dir={out / 'cache'}"], check=True,
                   stdout=subprocess.DEVNULL, timeout=900)
    # Steps of a tenth of an instruction: the ES first proposes candidates whose
    # decisions are all recorded, and has to widen its step.
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={corpus}",
                      f"--output={policy}", "--minutes=0.5", "--workers=2", "--seed=5",
                      "--method=es", "--search-modules=6", "--check-modules=3",
                      "--sigma=0.5", "--baseline-shifts=-20,20", f"--trace={trace}",
                      f"--cache-dir={out / 'cache'}")
    history = json.loads(open(str(policy) + ".history.json").read())
    return proc.stdout, history, json.loads(open(policy).read()), str(trace)


def test_compiles_keep_growing_after_the_cache_saturates(explored):
    log, history, _, _ = explored
    rounds = [h for h in history if h.get("phase") == "search"]
    timing = history[-1]
    assert timing["phase"] == "time"
    assert timing["idle_rounds"] > 0, log
    # After the first round that compiled nothing, the widened steps compile again.
    idle = next(h for h in rounds if h.get("idle"))
    assert rounds[-1]["compiled"] > idle["compiled"], log
    assert "compiles/s" in log and "replayed" in log


def test_time_breakdown_is_reported_and_kept(explored):
    log, history, policy, _ = explored
    timing = history[-1]
    phases = ("trace", "fitting", "compiling", "replaying", "selection", "evaluation", "other")
    assert all(timing[p] >= 0 for p in phases)
    assert timing["trace"] == 0  # given with --trace
    assert timing["compiling"] > 0 and timing["evaluation"] > 0 and timing["selection"] > 0
    # The phases cover the run: their sum is the wall time up to the report (30 s budget
    # plus validation), not a fraction of it.
    assert 20 < sum(timing[p] for p in phases) < 600
    assert "time: trace" in log
    assert set(policy["metadata"]["time"]) == set(phases)


def test_the_result_beat_the_one_number_baselines_on_the_check_modules(explored):
    log, history, policy, _ = explored
    sel = policy["metadata"]["selection"]
    names = {"learned", "constant shift -20", "constant shift +20", "no optional inline"}
    assert names <= set(sel)
    chosen = sel["chosen"]
    assert_selection_rule(sel, log)
    assert "check modules, no optional inline" in log


def assert_selection_rule(sel, log):
    """The chosen policy scores best on the check modules, except that a learned policy
    must beat the best baseline by more than z standard errors; a learned policy that
    scored best without that margin leaves the result to that baseline."""
    chosen = sel["chosen"]
    scores = {k: v["score"] for k, v in sel.items() if isinstance(v, dict)}
    baselines = {k: v for k, v in scores.items() if k != "learned"}
    best = max(baselines, key=baselines.get)
    learned = sel.get("learned")
    if chosen == "learned":
        assert learned["against"] == best
        assert learned["margin"] > learned["z"] * learned["standard_error"]
        assert all(scores["learned"] >= v for v in baselines.values())
    else:
        assert chosen == best or baselines[chosen] == baselines[best]
        if learned is not None and learned["score"] > baselines[chosen]:
            assert learned["margin"] <= learned["z"] * learned["standard_error"]
            assert "not enough to tell it from noise" in log
