"""research/two_channels.py: one clang-22 compile serving the eviction and the priority
channel together (the demo corpus's sha256.c at -O2, the real /usr/bin/clang-22)."""

import os

import pytest

import research_paths  # noqa: F401
import two_channels as tc

SOURCE = os.path.join(research_paths.ROOT, "data", "demo_corpus", "src", "sha256.c")


def serve(source=SOURCE, evict=None, priority=None):
    answers = {}
    if evict is not None:
        answers["evict"] = tc.evict_answer(*evict)
    if priority is not None:
        answers["priority"] = tc.priority_answer(priority)
    run = tc.compile_serving(source, answers, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.object_ok
    return run


@pytest.fixture(scope="module")
def both():
    return serve(evict=("self",), priority="weight")


def test_one_compile_answers_both_channels_and_gives_an_object(both):
    # Both headers come before clang's first question (epoch 0: no answer given yet).
    headers = sorted((r.channel, r.epoch) for r in both.records if r.kind == "header")
    assert headers == [("evict", 0), ("priority", 0)]
    assert tc.questions(both, "evict") > 0 and tc.questions(both, "priority") > 0
    # clang holds both channels open by its first question.
    assert both.open_at_first_question == {"evict": True, "priority": True}


def test_every_function_names_itself_on_both_channels_before_its_questions(both):
    ctx = tc.context_order(both)
    assert ctx["functions"] > 0
    assert ctx["on_both"] == ctx["functions"]
    assert ctx["before_first_question"] == ctx["with_questions"]


def test_questions_interleave_and_each_function_starts_with_priorities(both):
    rows = tc.per_function(both)
    mixed = [f for f in rows.values() if {r.channel for r in f} == {"evict", "priority"}]
    assert mixed
    for f in mixed:
        pattern = tc.pattern(f)
        assert pattern.startswith("P") and pattern.count(" ") >= 2, pattern


def test_each_channel_alone(both):
    prio = serve(priority="weight")
    evict = serve(evict=("self",))
    assert tc.questions(prio, "evict") == 0 and tc.questions(prio, "priority") > 0
    assert tc.questions(evict, "priority") == 0 and tc.questions(evict, "evict") > 0
    assert {r.channel for r in prio.records} == {"priority"}
    assert {r.channel for r in evict.records} == {"evict"}


def test_each_stream_follows_the_other_channels_answers(both):
    other_evict = serve(evict=("first",), priority="weight")
    d = tc.divergence(both, other_evict, "priority")
    assert d["stream_differs"] > 0 and d["observation_before_answer_differs"] == 0
    other_prio = serve(evict=("self",), priority="size")
    d = tc.divergence(both, other_prio, "evict")
    assert d["stream_differs"] > 0 and d["observation_before_answer_differs"] == 0


def test_answers_in_one_function_change_only_that_function(both):
    target = next(n for n, f in tc.per_function(both).items()
                  if any(r.channel == "evict" for r in f))
    one = serve(evict=("first", target), priority="weight")
    assert tc.changed_functions(both, one) == [target]


def test_a_module_without_functions_opens_neither_channel(tmp_path):
    source = tmp_path / "data.c"
    source.write_text("int table[4] = {1, 2, 3, 4};\n")
    run = serve(str(source), evict=("self",), priority="weight")
    assert run.records == [] and run.open_at_first_question == {}


def test_each_module_asks_a_priority_first():
    sources = [os.path.join(research_paths.ROOT, "data", "demo_corpus", "src", name)
               for name in ("sha256.c", "lz77.c", "avl_tree.cpp")]
    got = tc.sweep(sources)
    assert got["exit_0_with_object"] == 3
    assert got["first_question"] == {"priority": 3}
    assert got["distinct_first_questions"] == 3 and got["functions_evicting_first"] == []


def test_a_compile_that_cannot_start_leaves_no_descriptors():
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        tc.compile_serving(SOURCE, {"evict": tc.evict_answer("self"),
                                    "priority": tc.priority_answer("weight")},
                           wrap=("/nonexistent/wrapper",))
    assert len(os.listdir("/proc/self/fd")) == before
