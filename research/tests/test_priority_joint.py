"""research/priority_search.py, joint_search.py and priority_cc.py: the priority search
and the eviction search under its priorities, on the -O2 demo corpus with the real
clang-22, and the compiler wrapper's choices."""

import json
import os

import numpy as np
import pytest

import research_paths  # noqa: F401
import joint_search
import priority_cc
import priority_search
from test_regalloc_training import demo_o2

import mlgo_env

MODULE = "sha256.o"


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """The priority search of sha256.o for a few seconds, and its file."""
    _, corpus = demo_o2()
    out = tmp_path_factory.mktemp("prio") / "priorities.json"
    priority_search.main(["--corpus", corpus, "--module", MODULE, "--seconds", "6",
                          "--out", str(out)])
    with open(out) as f:
        return corpus, out, json.load(f)["modules"][0]


def test_the_priority_search_only_keeps_what_lowers_a_function(searched):
    _, _, r = searched
    assert r["module"] == MODULE and r["episodes"] > 1
    assert r["best"] <= r["start"]
    for f in r["functions"].values():
        assert all(m in priority_search.MULTIPLIERS for m in f["multipliers"].values())


def test_its_decisions_replay_to_its_score(searched):
    corpus, _, r = searched
    env = mlgo_env.make("regalloc-priority", corpus, priority_fallback="weight",
                        regalloc_score="instructions")
    try:
        again = json.loads(json.dumps(r))
        assert priority_search.confirm(env, again) == pytest.approx(r["best"], rel=1e-12)
    finally:
        env.close()
    assert all(f["questions"] > 0 for f in again["functions"].values())


def test_the_fallback_is_the_environments():
    for w, want in [(0.5, 500.0), (float("inf"), 0.0), (float("nan"), 0.0), (-1.0, 0.0),
                    (1e9, float(2 ** 24 - 1))]:
        assert priority_search.fallback({"weight": np.float32([w])}) == want


def test_evictions_searched_under_the_priorities(searched, tmp_path):
    corpus, priorities, _ = searched
    out = tmp_path / "joint.json"
    joint_search.main(["--corpus", corpus, "--priorities", str(priorities), "--module", MODULE,
                       "--seconds", "6", "--out", str(out)])
    with open(out) as f:
        r = json.load(f)["modules"][0]
    assert r["best"] <= r["start"] and r["episodes"] >= 1
    assert any(f["evictions"] for f in r["functions"].values())
    # The eviction search ran with the host answering priorities: the start is not what
    # the plain eviction problem's emulation scores (clang's own priorities).
    env = mlgo_env.make("regalloc", corpus, regalloc_score="instructions")
    try:
        obs, info = env.reset(options={"module": MODULE})
        while True:
            obs, _, term, trunc, info = env.step(int(info["default_action"]))
            if term or trunc:
                break
    finally:
        env.close()
    assert "priority_answers" not in info
    assert info["policy_score"] != pytest.approx(r["start"], rel=1e-12)


def test_the_wrapper_serves_only_the_modules_its_file_names():
    modules = [{"module": ".libs/liblzma_la-lz_decoder.o"}, {"module": "x/y.o"}]
    assert priority_cc.output_of(["-c", "a.c", "-o", "b.o"]) == "b.o"
    assert priority_cc.output_of(["-c", "a.c", "-ob.o"]) == "b.o"
    assert priority_cc.output_of(["-c", "a.c"]) is None
    m = priority_cc.matching(modules, "src/liblzma/.libs/liblzma_la-lz_decoder.o")
    assert m is modules[0]
    assert priority_cc.matching(modules, "liblzma_la-lz_decoder.o") is None
    assert priority_cc.matching(modules, "y.o") is None
    assert priority_cc.matching(modules, "./x/y.o") is modules[1]


def test_the_wrapper_answers_both_channels_of_a_joint_entry(tmp_path):
    source = os.path.join(research_paths.ROOT, "data", "demo_corpus", "src", "sha256.c")
    obj = tmp_path / "sha256.o"
    log = tmp_path / "d.json.log"
    module = {"module": "sha256.o", "functions": {"sha256_hex": {"multipliers": {"0": 16.0},
                                                                 "evictions": [32]}}}
    code = priority_cc.serve(module, ["/usr/bin/clang-22", "-O2", "-c", source, "-o",
                                      str(obj)], str(log))
    assert code == 0 and obj.read_bytes()[:4] == b"\x7fELF"
    line = json.loads(log.read_text())
    assert line["module"] == "sha256.o" and line["questions"] > 1
