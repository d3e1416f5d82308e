"""A retune after an edit (mlgo_env.tuning.carry) with the real clang-22 on the -Oz demo
corpus: a module whose bitcode changed but whose decisions' stream did not is kept after one
episode; one whose stream moved starts warm from its old search and needs fewer episodes
than its first search to reach at least its old result."""
import json
import os
import shutil
import subprocess

import pytest

from mlgo_env.tuning.session import TuneOptions, tune
from mlgo_env.tuning.state import load_states, save_state
from mlgo_env.tuning.status import status_lines
from mlgo_env.tuning.table import read_entries

from test_train import demo_corpus

MODULE = "huffman.o"


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """One first tune of MODULE for the module's tests: (its folder, its summary)."""
    _, demo = demo_corpus()
    where = tmp_path_factory.mktemp("first")
    corpus = where / "corpus"
    shutil.copytree(demo, corpus)
    o = TuneOptions("inlining", str(corpus), str(where / "tuning"), minutes=1.0, workers=2,
                    progress_every=0, modules=[MODULE])
    first = tune(o, lambda _: None)
    assert first.entries == 1, "the first tune recorded no entry"
    return where, first


def _first_tune(tmp_path, tuned):
    """A copy of the first tune's corpus and tuning folder in `tmp_path`, and its options."""
    where, first = tuned
    corpus, out = tmp_path / "corpus", tmp_path / "tuning"
    shutil.copytree(where / "corpus", corpus)
    shutil.copytree(where / "tuning", out)
    o = TuneOptions("inlining", str(corpus), str(out), minutes=1.0, workers=2,
                    progress_every=0, modules=[MODULE])
    return o, corpus, out, first


def _rename_source(bc: str) -> None:
    """Edits the module's bitcode without touching its code: another source_filename."""
    ll = bc + ".ll"
    subprocess.run(["llvm-dis-22", bc, "-o", ll], check=True)
    with open(ll) as f:
        text = f.read()
    assert "source_filename = " in text
    lines = [('source_filename = "edited-elsewhere.c"' if x.startswith("source_filename")
              else x) for x in text.splitlines()]
    with open(ll, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["llvm-as-22", ll, "-o", bc], check=True)
    os.unlink(ll)


def test_an_edit_the_decisions_do_not_see_keeps_the_module_after_one_episode(tmp_path, tuned):
    o, corpus, out, first = _first_tune(tmp_path, tuned)
    before = read_entries(str(out))[0]
    bc = str(corpus / (MODULE + ".bc"))
    old_bytes = open(bc, "rb").read()
    _rename_source(bc)
    assert open(bc, "rb").read() != old_bytes, "the edit did not change the bitcode"
    lines = []
    again = tune(o, lines.append)
    assert again.searched == 1 and again.skipped == 0
    assert again.carried == [MODULE], lines
    # one episode replays the old entry, one records the entry again: no search
    assert again.episodes == 1
    after = read_entries(str(out))[0]
    assert after.actions == before.actions and after.stream == before.stream
    assert after.tuned_score == before.tuned_score
    states, _ = load_states(str(out), "inlining")
    assert states[MODULE]["carried"] is True
    status = "\n".join(status_lines(str(out), str(corpus), None))
    assert f"kept across an edit: {MODULE}" in status, status


def test_a_moved_stream_starts_warm_and_needs_fewer_episodes(tmp_path, tuned):
    o, corpus, out, first = _first_tune(tmp_path, tuned)
    states, _ = load_states(str(out), "inlining")
    old = states[MODULE]
    assert old["status"] == "done", "the first search did not finish in its minute"
    # The module as if edited: another identity, and an entry whose stream the compiler no
    # longer gives (so the old decisions cannot be kept as they are).
    old["identity"] = dict(old["identity"], bitcode="0" * 64)
    old["entry"] = dict(old["entry"], stream="f" * 64)
    save_state(str(out), MODULE, old)
    lines = []
    again = tune(o, lines.append)
    assert again.searched == 1 and again.carried == []
    assert again.tuned_total <= first.tuned_total, (again.tuned_total, first.tuned_total)
    assert again.episodes < first.episodes, (again.episodes, first.episodes)
    with open(out / "state" / (MODULE + ".json")) as f:
        search = json.load(f)["search"]
    assert "before the edit" in search["start_scores"]


def test_an_entry_without_site_keys_is_recorded_again_after_one_episode(tmp_path, tuned):
    """A table written before entries held site keys: the unchanged module is replayed once
    and its entry recorded again with them, decisions unchanged."""
    o, corpus, out, first = _first_tune(tmp_path, tuned)
    states, _ = load_states(str(out), "inlining")
    old = states[MODULE]
    assert "sites" in old["entry"]
    del old["entry"]["sites"]
    save_state(str(out), MODULE, old)
    before = read_entries(str(out))[0]
    again = tune(o, lambda _: None)
    assert again.episodes == 1 and again.carried == []
    states, _ = load_states(str(out), "inlining")
    assert "sites" in states[MODULE]["entry"] and states[MODULE]["carried"] is False
    after = read_entries(str(out))[0]
    assert after.actions == before.actions and after.stream == before.stream
    assert tune(o, lambda _: None).episodes == 0  # and not again
