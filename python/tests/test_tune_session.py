"""The tuning session (mlgo_env.tuning.session) with the real clang-22 on the -Oz demo corpus:
a rerun keeps unchanged modules, a changed module is tuned again, the table and the report
agree with the states."""
import csv
import os
import shutil

from mlgo_env.tuning.session import TuneOptions, tune
from mlgo_env.tuning.table import read_entries

from test_train import demo_corpus

MODULES = ["sha256.o", "huffman.o"]


def test_rerun_is_incremental_and_a_changed_module_is_tuned_again(tmp_path):
    _, demo = demo_corpus()
    corpus = tmp_path / "corpus"
    shutil.copytree(demo, corpus)
    out = tmp_path / "tuning"
    lines = []
    o = TuneOptions("inlining", str(corpus), str(out), minutes=0.3, workers=2,
                    progress_every=0, modules=list(MODULES))
    first = tune(o, lines.append)
    assert first.searched == 2 and first.entries == 2 and first.episodes > 2
    assert lines[-1].startswith("total: default ")
    entries = {e.module: e for e in read_entries(str(out))}
    with open(out / "report.csv") as f:
        report = {r["module"]: r for r in csv.DictReader(f)}
    for m in MODULES:
        assert float(report[m]["tuned_score"]) == entries[m].tuned_score
        assert entries[m].tuned_score <= entries[m].default_score
    again = tune(o, lambda _: None)
    assert again.searched == 0 and again.skipped == 2 and again.entries == 2
    # A module whose bitcode changes is tuned again; the other is kept.
    shutil.copy(os.path.join(demo, "bignum.o.bc"), corpus / "sha256.o.bc")
    third = tune(o, lambda _: None)
    assert third.searched == 1 and third.skipped == 1
    assert {e.module for e in read_entries(str(out))} == set(MODULES)


def test_a_budget_that_ends_among_the_starts_records_the_best_start(tmp_path):
    """A module whose search never got past the one-number starts still gets its best start
    recorded (the record episode replays it)."""
    from mlgo_env.tuning.inlining_tuner import InliningTuner
    from mlgo_env.episodes import env_factory
    _, demo = demo_corpus()
    o = TuneOptions("inlining", demo, str(tmp_path / "t"))
    env = env_factory("inlining", o.corpus, None, None, None, InliningTuner.ir2vec_vocab)()
    try:
        space = env.observation_space
        t = InliningTuner("sha256.o", list(getattr(space, "spaces", space).keys()), None)
        t.play(env)
        t.play(env)  # two of the five starts
        assert t.search is None and t.best_score is not None
        from mlgo_env import episodes as ep
        result = ep.play_episode(env, "sha256.o", t.decider())
        assert result.policy_score == t.best_score
        assert t.state()["shift"] in (None, -20.0)
    finally:
        env.close()
