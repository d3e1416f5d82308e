"""The trainer does not idle: with a budget longer than its first labels and the replay
cache can fill, rounds of replays only make it explore, and compiles keep coming (real
clang-22, the -Oz demo corpus, a half-minute budget)."""

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
    # Few first labels (one flip per module, 5% of the budget): the ES soon proposes
    # only candidates whose decisions are recorded, and has to explore.
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={corpus}",
                      f"--output={policy}", "--minutes=0.5", "--workers=2", "--seed=5",
                      "--search-modules=6", "--check-modules=3", "--flips-per-module=1",
                      "--flip-share=0.05", "--explore-batch=4", "--report-seconds=2",
                      "--baseline-shifts=-20,20", f"--trace={trace}",
                      f"--cache-dir={out / 'cache'}")
    history = json.loads(open(str(policy) + ".history.json").read())
    return proc.stdout, history, json.loads(open(policy).read()), str(trace)


def test_compiles_keep_growing_after_the_cache_saturates(explored):
    log, history, _, _ = explored
    rounds = [h for h in history if h.get("phase") == "search"]
    idle = [h for h in rounds if "explored" in h]
    timing = history[-1]
    assert timing["phase"] == "time"
    assert timing["idle_rounds"] > 0, log
    assert timing["explored"] > 0, log
    # The first round that explored: compiles counted before it are fewer than at the end.
    first = next(h for h in rounds if "explored" in h)
    assert rounds[-1]["compiled"] > first["compiled"], log
    assert len(idle) >= 1
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


def test_imitation_learns_from_grouped_flip_searches(explored, tmp_path):
    """--method=imitation: greedy grouped-flip searches (never a bigger module) give the
    labels; the run ends with the same selection against the baselines."""
    exe, corpus = demo_corpus()
    trace = explored[3]
    policy = tmp_path / "imitation.json"
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={corpus}",
                      f"--output={policy}", "--minutes=0.5", "--workers=2", "--seed=5",
                      "--method=imitation", "--search-modules=6", "--check-modules=3",
                      "--flip-share=0.5", "--report-seconds=5", "--baseline-shifts=20",
                      f"--trace={trace}", f"--cache-dir={tmp_path / 'cache'}")
    history = json.loads(open(str(policy) + ".history.json").read())
    groups = next(h for h in history if h.get("phase") == "groups")
    assert groups["episodes"] >= 6 and groups["best_bytes"] <= groups["default_bytes"]
    meta = json.loads(open(policy).read())["metadata"]
    assert meta["labels"]["method"] == "imitation" and meta["labels"]["collected"] > 0
    assert "grouped flips:" in proc.stdout and "check modules, learned" in proc.stdout


def test_residual_starts_from_the_best_constant_shift(explored, tmp_path):
    """--method=residual: the base shift is chosen on the search modules, the grouped
    searches start from it, and the result passes the same selection; a result that is
    the base shift itself is named as that baseline, never as learned."""
    exe, corpus = demo_corpus()
    trace = explored[3]
    policy = tmp_path / "residual.json"
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={corpus}",
                      f"--output={policy}", "--minutes=0.5", "--workers=2", "--seed=5",
                      "--method=residual", "--search-modules=6", "--check-modules=3",
                      "--flip-share=0.5", "--report-seconds=5", "--baseline-shifts=20",
                      "--base-shifts=-20,20", f"--trace={trace}",
                      f"--cache-dir={tmp_path / 'cache'}")
    history = json.loads(open(str(policy) + ".history.json").read())
    base = next(h for h in history if h.get("phase") == "base")
    assert base["shift"] in (0.0, -20.0, 20.0)
    assert base[f"shift {base['shift']:+g}"] == max(
        base[k] for k in ("shift +0", "shift -20", "shift +20"))
    assert f"grouped-flip searches from " in proc.stdout
    assert "residual network fitted on" in proc.stdout
    meta = json.loads(open(policy).read())["metadata"]
    sel = meta["selection"]
    chosen = sel["chosen"]
    assert_selection_rule(sel, proc.stdout)
    if chosen == "learned":
        assert "beats every one-number baseline" in proc.stdout
