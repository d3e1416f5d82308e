"""The regalloc problems' score option with the real clang-22 on the -O2 demo corpus:
make(..., regalloc_score=...) reaches the environment (its reward definition and its
default scores change), a bad name is refused naming the keyword, and tune keys a module's
state by the score, so a tune under another score searches it afresh."""
import os
import shutil

import pytest

import mlgo_env
from mlgo_env.tuning import pick
from mlgo_env.tuning.session import TuneOptions, tune
from mlgo_env.tuning.state import load_states
from mlgo_env.tuning.status import status_lines
from mlgo_env.tuning.table import read_manifest

from test_train import demo_corpus

MODULE = "sha256.o"  # spills little and copies registers: the two scores differ


def o2_corpus() -> str:
    exe, _ = demo_corpus()
    corpus = os.path.join(os.path.dirname(os.path.dirname(exe)), "corpus", "demo-O2")
    if not os.path.isfile(os.path.join(corpus, "corpus_description.json")):
        pytest.fail(f"the -O2 demo corpus is not built at {corpus}")
    return corpus


def default_episode(env) -> dict:
    """The last info of an episode of MODULE answered with the default decisions."""
    _, info = env.reset(options={"module": MODULE})
    done = False
    while not done:
        _, _, term, trunc, info = env.step(info["default_action"])
        done = term or trunc
    return info


def test_make_passes_the_score_to_the_environment(tmp_path):
    scores = {}
    for name in ("llvm", "instructions", "executed"):
        env = mlgo_env.make("regalloc", regalloc_score=name, jobs=1,
                            cache_dir=str(tmp_path / "cache"))  # one cache for both
        try:
            reward = env.description["reward"]
            assert ("spills + reloads + copies" in reward) == (name == "instructions"), reward
            assert ("estimated to execute" in reward) == (name == "executed"), reward
            info = default_episode(env)
            assert info["default_score"] > 0
            scores[name] = info["default_score"]
        finally:
            env.close()
    # Not the cached llvm figure: copies weigh 1 instead of 0.2, folded ones 0.
    assert scores["instructions"] != scores["llvm"], scores
    # every instruction of the object, not only what the allocator added
    assert scores["executed"] > scores["instructions"], scores


def test_an_unknown_score_is_refused_naming_the_keyword():
    with pytest.raises(mlgo_env.InvalidParams, match="regalloc_score: unknown regalloc "
                       r"score 'copies' \(expected llvm, instructions or executed\)"):
        mlgo_env.make("regalloc", regalloc_score="copies")


def test_tune_searches_a_module_again_under_another_score(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(o2_corpus(), corpus)
    out = str(tmp_path / "tuning")

    def run(score: str):
        o = TuneOptions("regalloc", str(corpus), out, minutes=0.3, workers=1,
                        progress_every=0, modules=[MODULE], regalloc_score=score,
                        cache_dir=str(tmp_path / "cache"))
        summary = tune(o, lambda _: None)
        states, _ = load_states(out, "regalloc")
        return summary, states[MODULE]

    first, llvm = run("llvm")
    assert first.searched == 1 and "score" not in llvm["identity"]
    again, instructions = run("instructions")
    assert again.searched == 1 and again.skipped == 0, "another score must search afresh"
    assert instructions["identity"]["score"] == "instructions"
    assert instructions["default_score"] != llvm["default_score"]
    kept, same = run("instructions")
    assert kept.searched == 0 and kept.skipped == 1
    assert same["default_score"] == instructions["default_score"]
    # tune status says which score the table's search lowered
    said = [line for line in status_lines(out, None, None) if line.startswith("score: ")]
    assert said == ["score: instructions (spills + reloads + copies, folded ones 0, each "
                    "times its block's frequency): 1 module"], said
    # tune pick takes the module as tuned (the score is not a change of the corpus), and
    # would record under the score it was searched with.
    o = pick.PickOptions(out, str(corpus), "true", "true")
    said = []
    matching = pick._matching_states(o, read_manifest(out), said.append)
    assert MODULE in matching and not said, said
    executed, by_object = run("executed")
    assert executed.searched == 1, "the executed score searches afresh"
    assert by_object["identity"]["score"] == "executed"
    said = [line for line in status_lines(out, None, None) if line.startswith("score: ")]
    assert said == ["score: executed (every instruction of the object, each times its block's "
                    "frequency and its function's profile entry count): 1 module"], said
    back, _ = run("llvm")
    assert back.searched == 1, "back to llvm's score searches again"
    said = [line for line in status_lines(out, None, None) if line.startswith("score: ")]
    assert len(said) == 1 and said[0].startswith("score: llvm (LLVM's weighting") and \
        said[0].endswith(": 1 module"), said


def test_tune_refuses_the_score_on_inlining(tmp_path):
    o = TuneOptions("inlining", o2_corpus(), str(tmp_path / "t"), minutes=0.1,
                    regalloc_score="instructions")
    with pytest.raises(ValueError, match="needs --problem=regalloc"):
        tune(o, lambda _: None)
