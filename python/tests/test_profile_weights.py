"""The profile's weights that order a regalloc tune (mlgo_env.tuning.profile_weights): read
from a real clang-22 instrumentation profile, and the session's scheduler giving the modules
the workload runs their episodes first, in proportion to their share."""
import os
import subprocess
import sys
import time

import pytest

from mlgo_env.tuning.profile_weights import (ProfileWeights, corpus_profile, main_file,
                                             parse_profile_show, profdata_tool,
                                             read_profile_weights, split_name)
from mlgo_env.tuning.session import _Scheduler
from mlgo_env.tuning.tuner import ModuleTuner

SHOW = """Counters:
  src/a.c:hot_static:
    Hash: 0x0000000000000018
    Counters: 3
    Function count: 10
    Block counts: [1000, 5]
  main:
    Hash: 0x0000000000000018
    Counters: 1
    Function count: 1
    Block counts: []
  b.c;cold:
    Hash: 0x0
    Counters: 2
    Function count: 0
    Block counts: [0]
Instrumentation level: Front-end
"""


def test_parse_sums_entry_and_block_counts_by_file_and_name():
    w = parse_profile_show(SHOW)
    # a local function's file counts by its name (-main-file-name's, as main_file gives it)
    assert w.files == {"a.c": 1015, "b.c": 0} and w.functions == {"main": 1}
    assert w.total == 1016 and w.ran() == 2
    # a module carries its main file's local functions and the external ones it showed
    assert w.share(["main"], "a.c") == 1.0
    assert w.share(["main"], "b.c") == pytest.approx(1 / 1016)
    assert w.share(["unknown"], None) == 0.0
    assert split_name("_ZN1a1fEv") == (None, "_ZN1a1fEv") and split_name("x/y.c;f") == ("y.c", "f")
    # Objective-C methods: their own colons are not a file's.
    assert split_name("-[Foo bar:baz:]") == (None, "-[Foo bar:baz:]")
    assert split_name("a/x.m:+[Foo qux:]") == ("x.m", "+[Foo qux:]")
    assert split_name("a/x.m;-[Foo bar:]") == ("x.m", "-[Foo bar:]")


SOURCE = r"""
static int work(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i * i % 7; return s; }
int rarely(int n) { return n + 1; }
int main(int argc, char **argv) { (void)argv; return (work(100000 * argc) + rarely(argc)) & 1; }
"""


def profile_of(tmp_path, source, flag: str, cwd=None):
    """(the weights of `source`'s workload profiled with `flag`, llvm-profdata): compiled
    (in `cwd`, as named), run, merged."""
    exe = tmp_path / "w"
    subprocess.run(["clang-22", "-O1", flag, source, "-o", str(exe)], check=True, cwd=cwd)
    subprocess.run([str(exe)], env=dict(os.environ, LLVM_PROFILE_FILE=str(tmp_path / "w.raw")))
    tool = profdata_tool("clang-22")
    assert tool is not None, "llvm-profdata of clang-22 not found"
    data = tmp_path / "w.profdata"
    subprocess.run([tool, "merge", "-o", str(data), str(tmp_path / "w.raw")], check=True)
    weights = read_profile_weights(str(data), tool)  # raises nothing
    assert weights is not None
    return weights, tool


def module_with_main_file(tmp_path, name: bytes) -> str:
    """A corpus whose module w.o's command has -main-file-name `name`."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "w.o.cmd").write_bytes(b"-cc1\0-main-file-name\0" + name + b"\0-O2")
    return main_file(str(corpus), "w.o")


def test_a_real_profile_names_the_function_that_carries_the_workload(tmp_path):
    src = tmp_path / "w.c"
    src.write_text(SOURCE)
    w, tool = profile_of(tmp_path, str(src), "-fprofile-instr-generate")
    # `work` is static: its counts (nearly all) go to its translation unit's main file
    assert list(w.files) == ["w.c"] and w.share([], "w.c") > 0.99, (w.files, w.functions)
    assert 0 < w.functions["rarely"] < w.files["w.c"]
    assert w.share(["rarely", "main"], None) < 0.01
    # a file that is no profile reads as none, never as weights
    assert read_profile_weights(str(src), tool) is None


def test_an_ir_level_profile_s_local_functions_count_for_their_file(tmp_path):
    # -fprofile-generate names a local function by the source as the command gave it
    # (sub/w.c;work), the module's -main-file-name is w.c: the counts must still meet
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.c").write_text(SOURCE.replace("static int work",
                                                         "__attribute__((noinline)) static int work"))
    w, _ = profile_of(tmp_path, "sub/w.c", "-fprofile-generate", cwd=tmp_path)
    assert w.share([], module_with_main_file(tmp_path, b"w.c")) > 0.9, (w.files, w.functions)


def test_corpus_profile_is_the_one_the_commands_read(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for m, flag in (("a.o", f"-fprofile-instr-use={tmp_path}/p.profdata"),
                    ("b.o", None)):
        (corpus / (m + ".cmd")).write_bytes(b"\0".join(
            a.encode() for a in ["-cc1", "-O2", "-fdebug-compilation-dir=" + str(tmp_path)] +
            ([flag] if flag else [])))
    assert corpus_profile(str(corpus), ["a.o", "b.o"]) == (str(tmp_path / "p.profdata"), [])
    assert main_file(str(corpus), "a.o") is None
    (corpus / "c.o.cmd").write_bytes(b"-cc1\0-main-file-name\0c.c\0-O2")
    assert main_file(str(corpus), "c.o") == "c.c"
    (corpus / "b.o.cmd").write_bytes(b"-cc1\0-fprofile-instr-use=/elsewhere.profdata")
    path, problems = corpus_profile(str(corpus), ["a.o", "b.o"])
    assert path is None and "2 different profiles" in problems[0]


class Fake(ModuleTuner):
    problem = "fake"

    def __init__(self, module, names, default):
        super().__init__(module, [], None)
        self.names, self.default = names, default

    def propose(self):
        return None

    def settle(self, decider, result):
        self.episodes += 1
        self.default_score = self.default

    def done(self):
        return False

    def decider(self):
        return None

    def state(self):
        return {}

    def functions(self):
        return self.names if self.episodes else []


def takes(weights, rounds):
    tuners = [Fake("hot.o", ["work"], 1.0), Fake("warm.o", ["rarely"], 1.0),
              Fake("cold.o", ["never"], 1e9)]
    weigh = None if weights is None else (lambda t: weights.share(t.functions(), None))
    sched = _Scheduler(tuners, {"hot.o": 1, "warm.o": 2, "cold.o": 3},
                       time.monotonic() + 3600, 1, weigh)
    order = []
    for _ in range(rounds):
        t = sched.take()
        order.append(t.module)
        t.settle(None, None)
        sched.give_back(t, 0.01)
    return order


def test_the_scheduler_gives_the_workload_s_modules_the_budget_by_share():
    w = ProfileWeights({"work": 900, "rarely": 100, "never": 0}, {}, 1000)
    order = takes(w, 23)
    assert order[:3] == ["cold.o", "warm.o", "hot.o"], "the first round goes by size"
    rest = order[3:]
    assert "cold.o" not in rest, "a module the workload never ran waits for the others"
    # episodes in proportion to the shares (0.9 : 0.1): a module is taken while its share
    # per episode had (share / (1 + episodes)) is the highest
    assert order.count("hot.o") == 20 and order.count("warm.o") == 2, order
    # without a profile: the old order (clang's score per episode), the cold module first
    assert takes(None, 6)[3:] == ["cold.o"] * 3


def test_an_edited_module_is_weighed_by_the_functions_its_entry_episode_showed():
    from mlgo_env import episodes as ep
    from mlgo_env.tuning.carry import CarriedTuner
    from mlgo_env.tuning.regalloc_tuner import RegallocTuner
    # the module changed since it was tuned: its old entry plays once, the stream moved
    t = CarriedTuner(RegallocTuner, "hot.o", [], {"entry": {"stream": "old"}})
    t.settle(None, ep.EpisodeResult("hot.o", 0.0, 2.0, 2.0, 3, 0.1, 0.0, 0.1,
                                    contexts=[{"name": "work", "policy_score": 2.0}]))
    assert not t.carried and t.functions() == ["work"]
    cold = Fake("cold.o", ["never"], 1e9)
    cold.settle(None, None)
    w = ProfileWeights({"work": 900, "never": 0}, {}, 1000)
    sched = _Scheduler([cold, t], {"hot.o": 1, "cold.o": 2}, time.monotonic() + 3600, 1,
                       lambda m: w.share(m.functions(), None))
    assert sched.take() is t, "the workload's module goes before the cold one"


def test_a_file_name_that_is_not_utf8_reads_and_meets_its_module(tmp_path):
    src = os.path.join(os.fsencode(tmp_path), b"caf\xe9.c")
    with open(src, "w") as f:
        f.write(SOURCE)
    w, _ = profile_of(tmp_path, os.fsdecode(src), "-fprofile-instr-generate")
    assert w.share([], module_with_main_file(tmp_path, b"caf\xe9.c")) > 0.9, \
        (w.files, w.functions)


def test_no_profile_order_is_refused_on_inlining(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mlgo_env.tune", "--problem=inlining",
                        f"--corpus={tmp_path}", f"--output={tmp_path / 't'}",
                        "--no-profile-order"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 2 and "--no-profile-order needs --problem=regalloc" in r.stderr
    assert not (tmp_path / "t").exists()
