"""`python -m mlgo_env.tune pick`'s parts that need no compiler: its plan (candidates, hot
functions, the choice; mlgo_env.tuning.pick_plan), the cachegrind reader and the command
runner (mlgo_env.tuning.workload), and how a launcher log line names its module. The whole
step with clang-22, valgrind and a real build: tests/python/test_tune_workload.py."""

import os
import time

import pytest

from mlgo_env.tuning import pick_plan as plan
from mlgo_env.tuning.pick import _module_of
from mlgo_env.tuning.workload import CommandError, Runner, read_cachegrind


def search_state():
    """f: static best [1, 1] (6.0), earlier incumbents 10.0 (the start), 9.0, 8.0, 7.0;
    g: no earlier incumbent."""
    return {"incumbents": {"f": [1, 1], "g": [32]},
            "scores": {"f": 6.0, "g": 5.0},
            "chains": {"f": [[10.0, [32, 32]], [9.0, [2, 32]], [8.0, [3, 32]],
                             [7.0, [4, 32]]]}}


def test_candidates_are_the_static_best_then_earlier_incumbents_back_to_the_start():
    cands = plan.function_candidates(search_state(), 3)
    assert [c.score for c in cands["f"]] == [6.0, 8.0, 10.0]
    assert cands["f"][0].actions == [1, 1] and cands["f"][-1].actions == [32, 32]
    assert [c.score for c in cands["g"]] == [5.0]
    assert [c.score for c in plan.function_candidates(search_state(), 9)["f"]] == \
        [6.0, 7.0, 8.0, 9.0, 10.0]
    # A state older than the scores: the candidates' scores are unknown.
    old = {"incumbents": {"f": [1]}}
    assert plan.function_candidates(old, 3)["f"] == [plan.Candidate(None, [1])]


def test_hot_functions_carry_a_share_of_the_tuned_functions_instructions():
    counts = {"f": 900, "g": 99, "h": 1, "printf": 10_000}
    assert plan.hot_functions(counts, {"f", "g", "h"}, 0.05) == {"f": 900, "g": 99}
    assert plan.hot_functions(counts, {"f", "g", "h"}, 0.0) == {"f": 900, "g": 99, "h": 1}
    assert plan.hot_functions({"printf": 5}, {"f"}, 0.0) == {}


def test_a_variant_gives_hot_functions_their_candidate_and_the_others_their_best():
    (m,) = plan.hot_modules({"a.o": {"search": search_state()}}, {"f"}, 3, {})
    assert m.hot == {"f"} and m.entry_actions is None
    assert m.composition(1) == {"f": [3, 32], "g": [32]}
    assert m.composition(5) == {"f": [32, 32], "g": [32]}  # past the last: the last
    assert m.composition({"f": 2, "g": 2}) == {"f": [32, 32], "g": [32]}  # g is not hot
    assert m.expected_score(1) == 8.0 + 5.0
    assert plan.hot_modules({"a.o": {"search": search_state()}}, {"x"}, 3, {}) == []


def test_the_choice_is_the_lowest_count_per_function_and_an_entry_must_beat_clang():
    a = plan.HotModule("a.o", plan.function_candidates(search_state(), 3), {"f"})
    b = plan.HotModule("b.o", {"g": [plan.Candidate(1.0, [1])]}, {"g"})
    variants = [{"f": 500, "g": 300}, {"f": 400, "g": 300}, {"f": 400, "g": 301}]
    c = plan.choose([a, b], variants, clang={"f": 450, "g": 300})
    assert c.index == {"f": 1, "g": 0}  # ties go to the lower index (better static)
    assert c.instructions == {"f": 400, "g": 300}
    assert c.entry == {"a.o": True, "b.o": False}  # b.o: no fewer than clang's own
    assert plan.defined_by([a, b]) == {"f": ["a.o"], "g": ["b.o"]}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_cachegrind_files_are_summed_per_function_and_must_add_up(tmp_path):
    good = write(tmp_path / "cg.1", "desc: I1 cache: none\ncmd: ./p\nevents: Ir\n"
                 "fl=???\nfn=hot\n0 100\n0 20\nfl=libc.c\nfn=memcpy@@GLIBC_2.14\n12 5\n"
                 "fn=hot\n0 3\nsummary: 128\n")
    counts = read_cachegrind(str(good))
    assert counts.total == 128 and counts.functions == {"hot": 123, "memcpy": 5}
    cut = write(tmp_path / "cg.2", "events: Ir\nfn=hot\n0 100\nsummary: 128\n")
    with pytest.raises(CommandError, match="incomplete"):
        read_cachegrind(str(cut))
    other = write(tmp_path / "cg.3", "events: Dr\nfn=hot\n0 1\nsummary: 1\n")
    with pytest.raises(CommandError, match="counts no Ir"):
        read_cachegrind(str(other))


def test_a_failing_command_says_why_with_the_end_of_its_output(tmp_path):
    r = Runner(str(tmp_path), 60, str(tmp_path))
    with pytest.raises(CommandError, match=r"the workload failed \(exit status 3\).*\n  oops"):
        r.run("the workload", "echo oops; exit 3", dict(os.environ), str(tmp_path / "log"))
    r.run("the build", "true", dict(os.environ), str(tmp_path / "log"))


def test_a_command_past_its_timeout_is_killed_with_its_whole_process_group(tmp_path):
    pid = tmp_path / "pid"
    # 5 s: time for a loaded machine to start the shell and write the pid before the kill
    r = Runner(str(tmp_path), 5.0, str(tmp_path))
    start = time.monotonic()
    with pytest.raises(CommandError, match="did not finish within 5 s"):
        r.run("the workload", f"sleep 300 & echo $! > {pid}; wait", dict(os.environ),
              str(tmp_path / "log"))
    assert time.monotonic() - start < 60
    child = int(pid.read_text())
    deadline = time.monotonic() + 10  # SIGKILL is delivered at once; dying can lag a loaded VM
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)


def running(pid):
    """Whether `pid` is a live process (a zombie whose parent died is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_workload_that_runs_nothing_through_mlgo_run_is_refused(tmp_path):
    r = Runner(str(tmp_path), 60, str(tmp_path))
    with pytest.raises(CommandError, match=r"ran no program through \$MLGO_RUN"):
        r.measure("true", dict(os.environ), str(tmp_path / "counts"))


def test_a_launcher_log_line_names_its_module_by_entry_or_by_the_longest_path_suffix():
    modules = {".libs/a.o": None, "a.o": None, "src/b.o": None}
    assert _module_of({"module": "a.o", "output": "x/y.o"}, modules) == "a.o"
    assert _module_of({"module": "", "output": ".libs/a.o"}, modules) == ".libs/a.o"
    assert _module_of({"module": "", "output": "a.o"}, modules) == "a.o"
    assert _module_of({"module": "", "output": "/b/build/src/b.o"}, modules) == "src/b.o"
    assert _module_of({"module": "", "output": "src/c.o"}, modules) is None


def test_tune_status_says_what_the_pick_measured_and_refuses_a_bad_report(tmp_path):
    import json
    from mlgo_env.tuning.status import workload_lines
    from mlgo_env.tuning.table import TableError
    assert list(workload_lines(str(tmp_path))) == []
    runs = [{"name": "tuned", "instructions": 1000}, {"name": "candidate 1", "instructions": 990},
            {"name": "picked", "instructions": 980}]
    write(tmp_path / "workload.json", json.dumps({"chosen": "picked", "runs": runs}))
    (line,) = workload_lines(str(tmp_path))
    assert line.startswith("workload pick: the picked table's workload executed 980 "
                           "instructions, the table as tuned 1,000 (-2.00%); candidate 1 990")
    write(tmp_path / "workload.json", json.dumps({"chosen": "picked"}))
    with pytest.raises(TableError, match="workload pick report .* is unreadable"):
        list(workload_lines(str(tmp_path)))
