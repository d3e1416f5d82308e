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
