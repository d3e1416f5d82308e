"""`python -m mlgo_env.tune` and `mlgo-env-launch --tuning` in real builds (ctest, label clang).

tests/data/launch_project is captured with `mlgo-env corpus build -- make` at -Oz, tuned
for a short while with the real clang-22, then built again by make (mlgo-env-launch) and by
CMake (`mlgo-env launch`, other object paths) with the table:

- every object has exactly the executable bytes tune reported for its module, and at least
  one is smaller than clang's own (so the check could fail); the programs print the same;
- editing one source so that its decisions change makes that module, and only it, fall
  back to clang's own decisions with `--no-stale` (its object is the plain build's, byte for
  byte); the launcher's log and `tune status --corpus=NEW` both name it (without
  `--no-stale` it keeps its unchanged call sites' decisions: test_launch_stale.py);
- a truncated entries file or manifest fails the compile that reads it, naming the file; an
  entry whose stream differs from the compile's makes the compile run again plainly, and
  says why (regalloc at -O2: test_tune_regalloc.py).

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG and MLGO_CLANGXX like
test_launch, and MLGO_LLD for ThinLTO (ctest sets them; real_tools.py): a missing one fails.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(CHECKOUT, "python"))
from real_tools import needs, path_of  # noqa: E402
from test_launch import (CC, CXX, MLGO_ENV, MLGO_ENV_LAUNCH, PROJECT, margin_policy,  # noqa: E402
                         objects_under, processes_naming, text_bytes)

from mlgo_env.policies.policy import save_policy  # noqa: E402

from mlgo_env.elf import executable_bytes  # noqa: E402
from mlgo_env.tuning import ir_sites, replay_drift  # noqa: E402
from mlgo_env.tuning.inline_replay import write_replay_file  # noqa: E402
from mlgo_env.tuning.replay_lines import (LOCATIONS, Command, disassemble,  # noqa: E402
                                          replay_options, write_lines)
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402

EDIT = "\ndouble mat_extra(const double *a, int n) { return at(a, n, 1, 1) + at(a, n, 0, 1); }\n"


def build(src, launcher=None, flags="-Oz", check=True):
    cc, cxx = CC, CXX
    if launcher:
        cc, cxx = " ".join(launcher + ["--", CC]), " ".join(launcher + ["--", CXX])
    run = subprocess.run(["make", "-j2", f"CC={cc}", f"CXX={cxx}", f"CFLAGS={flags}",
                          f"CXXFLAGS={flags}"], cwd=src, capture_output=True, text=True,
                         timeout=600)
    if check and run.returncode != 0:
        raise AssertionError(run.stdout + run.stderr)
    return run


def corpus_of(src, out, flags="-Oz"):
    subprocess.run([MLGO_ENV, "corpus", "build", f"--output_dir={out}", "--", "make", "-j2",
                    f"CFLAGS={flags}", f"CXXFLAGS={flags}"], cwd=src, check=True,
                   capture_output=True, timeout=600)
    subprocess.run(["make", "clean"], cwd=src, check=True, capture_output=True)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)


def log_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def program_output(src, name):
    return subprocess.run([os.path.join(src, name)], capture_output=True, text=True,
                          check=True).stdout


#: twice() is inlined into outer() by clang's own -Oz, and outer() into f(): the lines below
#: keep both calls of twice (in outer, and its copy in f), as a tuned "no" would
DRIFT_SOURCE = """static int twice(int x) { return x * 2 + 1; }
static int outer(int a) {
  return twice(a) + 3;
}
int f(int a, int b) {
  return outer(a) - b;
}
"""
DRIFT_LINES = {("outer", "twice", "outer:1:10"): False,
               ("f", "twice", "outer:1:10 @ f:1:10"): False}


@needs("MLGO_CLANG")
class ReplayDriftLines(unittest.TestCase):
    """Drift lines with the real clang-22: where they are made they change no object, and
    after an edit above the call (in the call's function, or in the function it was inlined
    into) they keep the decision the exact line no longer finds."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mlgo-drift-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def compile(self, source, lines, name):
        """(executable bytes, calls of twice left) of `source` compiled at -Oz with `lines`."""
        with open(os.path.join(self.dir, name + ".c"), "w") as f:
            f.write(source)
        path = os.path.join(self.dir, name + ".txt")
        write_lines(path, lines)
        argv = [CC, "-Oz", "-c", name + ".c", LOCATIONS, "-w"] + replay_options(path)
        for extra in (["-o", name + ".o"], ["-emit-llvm", "-o", name + ".bc"]):
            subprocess.run(argv + extra, cwd=self.dir, check=True, timeout=120)
        calls = ir_sites.parse_calls(disassemble(os.path.join(self.dir, name + ".bc")))
        return (executable_bytes(os.path.join(self.dir, name + ".o")),
                {c.key for c in calls if c.callee == "twice"})

    def test_drift_lines_keep_a_decision_across_an_edit_and_change_nothing_here(self):
        self.assertEqual(self.compile(DRIFT_SOURCE, {}, "plain")[1], set())
        exact = self.compile(DRIFT_SOURCE, DRIFT_LINES, "exact")
        self.assertEqual(exact[1], {"outer:1:10 @ f:1:10"})
        path = os.path.join(self.dir, "exact.txt")
        known = replay_drift.known_calls(Command([CC, "-Oz", "-c", "exact.c"], self.dir),
                                         path, self.dir)
        self.assertEqual(known[("twice", "outer:1:10 @ f:1:10")], False)
        self.assertEqual(known[("outer", "f:1:10")], True)  # from clang's remark
        drift = replay_drift.variants(DRIFT_LINES, known)
        self.assertFalse(set(drift) & set(DRIFT_LINES))
        both = {**DRIFT_LINES, **drift}
        self.assertEqual(self.compile(DRIFT_SOURCE, both, "drift"), exact)
        edits = {"caller": ("  return outer(a) - b;", "  b ^= a;\n  return outer(a) - b;",
                            "outer:1:10 @ f:2:10"),
                 "callee": ("  return twice(a) + 3;", "  a -= 3;\n  return twice(a) + 3;",
                            "outer:2:10 @ f:1:10")}
        for name, (old, new, key) in edits.items():
            edited = DRIFT_SOURCE.replace(old, new)
            self.assertEqual(self.compile(edited, DRIFT_LINES, name + "-exact")[1], set(), name)
            self.assertEqual(self.compile(edited, both, name + "-drift")[1], {key}, name)
            self.assertIn(("f", "twice", key), drift)


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class TunedInlining(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-tune-test-")
        cls.src = os.path.join(cls.dir, "captured")
        shutil.copytree(PROJECT, cls.src)
        cls.corpus = os.path.join(cls.dir, "corpus")
        corpus_of(cls.src, cls.corpus)
        cls.tuning = os.path.join(cls.dir, "tuning")
        lines = []
        cls.summary = tune(TuneOptions("inlining", cls.corpus, cls.tuning, minutes=0.6,
                                       workers=2, progress_every=0), lines.append)
        cls.lines = lines
        cls.entries = {e.module: e for e in read_entries(cls.tuning)}
        cls.plain = os.path.join(cls.dir, "plain")
        shutil.copytree(PROJECT, cls.plain)
        build(cls.plain)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def launcher(self, *extra):
        return [MLGO_ENV_LAUNCH, f"--tuning={self.tuning}", *extra]

    def fresh(self, name):
        path = os.path.join(self.dir, name)
        shutil.copytree(PROJECT, path)
        return path

    def test_summary_lines(self):
        self.assertRegex(self.lines[-1], r"^total: default \d+, tuned \d+, change [-+]\d+\.\d\d%$")
        self.assertIn("mean per-module reward", self.lines[-2])
        description = read_json(os.path.join(self.corpus, "corpus_description.json"))
        self.assertEqual(set(self.entries), set(description["modules"]))

    def test_make_build_gets_exactly_the_tuned_objects(self):
        src = self.fresh("tuned-make")
        log = os.path.join(self.dir, "make.log")
        build(src, self.launcher(f"--log={log}"))
        objects = objects_under(src)
        self.assertEqual(set(objects), set(self.entries))
        smaller = 0
        for module, path in objects.items():
            e = self.entries[module]
            self.assertEqual(text_bytes(path), e.tuned_score, module)
            smaller += e.tuned_score < e.default_score
        self.assertGreater(smaller, 0, "no module was tuned below clang's own size")
        self.assertEqual({r["outcome"] for r in log_lines(log)}, {"tuned"})
        for program in ("ctool", "cxxtool"):
            self.assertEqual(program_output(src, program), program_output(self.plain, program))

    def test_the_replay_file_gives_stock_clang_the_tuned_objects(self):
        # C modules: exact. C++ ones may keep departures the file cannot name (a call inside
        # an inlined template whose caller is gone from the final IR): then they are only
        # required not to lose what tuning saved overall.
        said = []
        summary = write_replay_file(self.tuning, self.corpus, MLGO_ENV_LAUNCH, 2, said.append)
        self.assertGreater(summary["lines"], 0, said)
        self.assertIn("drift_lines", summary)  # the exact checks below hold with them too
        report = {m["module"]: m for m in
                  read_json(os.path.join(self.tuning, "inline-replay.json"))["modules"]}
        with open(os.path.join(self.tuning, "inline-replay.flags")) as f:
            flags = f.read().strip()
        src = self.fresh("replay-make")
        build(src, flags="-Oz " + flags)  # stock clang-22: no launcher
        objects = objects_under(src)
        self.assertEqual(set(objects), set(self.entries))
        total = {"default": 0, "replayed": 0}
        for module, path in objects.items():
            e = self.entries[module]
            if module in ("src/text.o", "src/table.o", "src/matrix.o", "src/ctool.o"):
                self.assertTrue(report[module]["exact"], said)
            if report[module]["exact"]:
                self.assertEqual(text_bytes(path), e.tuned_score, module)
            self.assertEqual(text_bytes(path), report[module]["replayed_bytes"], module)
            total["default"] += e.default_score
            total["replayed"] += text_bytes(path)
        self.assertLess(total["replayed"], total["default"], said)
        self.assertTrue(any(r["lines"] and r["exact"] for r in report.values()), said)
        for program in ("ctool", "cxxtool"):
            self.assertEqual(program_output(src, program), program_output(self.plain, program))
        # clang refuses a cut line (the compile fails), and the writer a corpus it cannot use
        cut = os.path.join(self.dir, "cut-replay.txt")
        with open(os.path.join(self.tuning, "inline-replay.txt")) as f, open(cut, "w") as g:
            g.write(f.readline()[:40])
        run = build(self.fresh("replay-cut"), flags="-Oz " + flags.replace(
            os.path.join(self.tuning, "inline-replay.txt"), cut), check=False)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("Invalid remark format", run.stderr)
        with self.assertRaisesRegex(ValueError, "compile_commands.json does not exist"):
            write_replay_file(self.tuning, self.dir, MLGO_ENV_LAUNCH)

    def test_cmake_build_finds_modules_by_their_stream(self):
        src = self.fresh("tuned-cmake")
        b = os.path.join(src, "b")
        launcher = ";".join([MLGO_ENV, "launch", f"--tuning={self.tuning}", "--no-log", "--"])
        for cmd in (["cmake", "-S", src, "-B", b, "-G", "Unix Makefiles",
                     f"-DCMAKE_C_COMPILER={CC}", f"-DCMAKE_CXX_COMPILER={CXX}",
                     "-DCMAKE_C_FLAGS=-Oz", "-DCMAKE_CXX_FLAGS=-Oz",
                     f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}",
                     f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"],
                    ["cmake", "--build", b, "-j2"]):
            subprocess.run(cmd, check=True, capture_output=True, timeout=600)
        by_source = {}
        for rel, path in objects_under(b).items():
            stem = os.path.basename(rel).split(".")[0]
            by_source.setdefault(stem, set()).add(text_bytes(path))
        for module, e in self.entries.items():
            stem = os.path.basename(module).split(".")[0]
            self.assertEqual(by_source[stem], {e.tuned_score}, module)

    def test_an_edited_module_and_only_it_falls_back(self):
        src = self.fresh("edited")
        with open(os.path.join(src, "src", "matrix.c"), "a") as f:
            f.write(EDIT)
        plain = self.fresh("edited-plain")
        with open(os.path.join(plain, "src", "matrix.c"), "a") as f:
            f.write(EDIT)
        build(plain)
        log = os.path.join(self.dir, "edited.log")
        build(src, self.launcher(f"--log={log}", "--no-stale"))  # stale: test_launch_stale.py
        fell_back = {r["output"] for r in log_lines(log) if r["outcome"] != "tuned"}
        self.assertEqual(fell_back, {"src/matrix.o"})
        self.assertEqual(text_bytes(os.path.join(src, "src", "matrix.o")),
                         text_bytes(os.path.join(plain, "src", "matrix.o")))
        status = subprocess.run([sys.executable, "-m", "mlgo_env.tune", "status",
                                 f"--tuning={self.tuning}", f"--log={log}"],
                                capture_output=True, text=True, check=True,
                                env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")))
        self.assertIn("fell back: src/matrix.c", status.stdout)
        self.assertEqual(status.stdout.count("fell back: "), 1, status.stdout)
        # Captured again where it was captured first (bitcode names its source's path).
        newer = os.path.join(self.dir, "edited-corpus")
        matrix = os.path.join(self.src, "src", "matrix.c")
        with open(matrix) as f:
            original = f.read()
        try:
            with open(matrix, "a") as f:
                f.write(EDIT)
            corpus_of(self.src, newer)
        finally:
            with open(matrix, "w") as f:
                f.write(original)
        status = subprocess.run([sys.executable, "-m", "mlgo_env.tune", "status",
                                 f"--tuning={self.tuning}", f"--corpus={newer}", "--log=/dev/null"],
                                capture_output=True, text=True, check=True,
                                env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")))
        self.assertIn("changed: src/matrix.o", status.stdout)
        self.assertIn("5 tuned", status.stdout)
        self.assertEqual(status.stdout.count("changed: "), 1, status.stdout)

    def test_a_fallback_policy_answers_what_the_table_lacks(self):
        policy = os.path.join(self.dir, "shift.json")
        save_policy(margin_policy(-20.0), policy)
        sides = {}
        for side, launcher in (("table", self.launcher(f"--policy={policy}", "--no-log",
                                                       "--no-stale")),
                               ("policy", [MLGO_ENV_LAUNCH, f"--policy={policy}"])):
            src = self.fresh(f"fallback-{side}")
            with open(os.path.join(src, "src", "matrix.c"), "a") as f:
                f.write(EDIT)
            build(src, launcher)
            sides[side] = {m: text_bytes(p) for m, p in objects_under(src).items()}
        self.assertEqual(sides["table"]["src/matrix.o"], sides["policy"]["src/matrix.o"])
        for module, e in self.entries.items():
            if module != "src/matrix.o":
                self.assertEqual(sides["table"][module], e.tuned_score, module)

    def test_sigint_with_a_table_leaves_no_clang_and_no_fifo(self):
        src = self.fresh("interrupted")
        scratch = os.path.join(self.dir, "interrupted-tmp")
        os.mkdir(scratch)
        for i in range(2):  # slow compiles the table does not have
            with open(os.path.join(src, "src", f"big{i}.c"), "w") as f:
                f.write("".join(f"static int f{j}(int x) {{ return x * {j % 7 + 2} + f{j - 1}(x"
                                f" ^ {j}); }}\n" if j else "static int f0(int x) { return x; }\n"
                                for j in range(500)))
                f.write("int run(int x) { return f499(x); }\n")
        launcher = " ".join(self.launcher("--no-log", "--", CC))
        make = subprocess.Popen(["make", "-j2", f"CC={launcher}", "CFLAGS=-Oz", "src/big0.o",
                                 "src/big1.o"], cwd=src, env=dict(os.environ, TMPDIR=scratch),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline and not processes_naming(
                "interactive-channel-base=" + scratch):
            time.sleep(0.01)
        time.sleep(0.2)
        self.assertIsNone(make.poll(), "the build ended before it could be interrupted")
        os.killpg(make.pid, signal.SIGINT)
        _, err = make.communicate(timeout=60)
        self.assertNotEqual(make.returncode, 0)
        self.assertIn("mlgo-env launch: interrupted (SIGINT)", err)
        time.sleep(0.2)
        self.assertEqual(processes_naming(scratch), [])
        self.assertEqual(os.listdir(scratch), [])

    def test_another_compiler_or_other_flags_miss_and_say_so(self):
        other = os.path.join(self.dir, "other-clang-table")
        shutil.copytree(self.tuning, other)
        manifest = read_json(os.path.join(other, "tuning.json"))
        manifest["clang"].update(path="/opt/clang-99/bin/clang", version="clang version 99.0.0")
        write_json(os.path.join(other, "tuning.json"), manifest)
        log = os.path.join(self.dir, "other-clang.log")
        src = self.fresh("other-clang")
        build(src, [MLGO_ENV_LAUNCH, f"--tuning={other}", f"--log={log}"])
        whys = {r["why"] for r in log_lines(log)}
        self.assertEqual(len(whys), 1, whys)
        self.assertRegex(whys.pop(), r"^the table was made with 'clang version 99\.0\.0', this "
                                     r"compiler is '.*clang version 22")
        plain = objects_under(self.plain)
        for module, path in objects_under(src).items():
            self.assertEqual(text_bytes(path), text_bytes(plain[module]), module)
        # The -Oz table in a -O2 build: every module falls back, at its first decision
        # (-O2 often asks the same first question as -Oz, and some modules the same stream).
        log = os.path.join(self.dir, "o2.log")
        src, plain_o2 = self.fresh("o2"), self.fresh("o2-plain")
        build(plain_o2, flags="-O2")
        build(src, self.launcher(f"--log={log}"), flags="-O2")
        lines = log_lines(log)
        self.assertTrue(lines)
        for r in lines:
            self.assertIn(r["outcome"], ("fallback", "no-decisions"), r)
            if r["outcome"] == "fallback":  # missed at once, or found and then departed
                self.assertRegex(r["why"], "no tuned module makes this first decision|"
                                           "module tuned at -Oz, this compile is at -O2")
        plain = objects_under(plain_o2)
        for module, path in objects_under(src).items():
            self.assertEqual(text_bytes(path), text_bytes(plain[module]), module)

    def test_a_truncated_table_file_fails_the_compile_naming_it(self):
        broken = os.path.join(self.dir, "broken-table")
        shutil.copytree(self.tuning, broken)
        entries = sorted(os.listdir(os.path.join(broken, "modules")))
        for name in entries:
            path = os.path.join(broken, "modules", name)
            with open(path, "r+") as f:
                f.truncate(os.path.getsize(path) // 2)
        src = self.fresh("broken")
        run = build(src, [MLGO_ENV_LAUNCH, f"--tuning={broken}"], check=False)
        self.assertNotEqual(run.returncode, 0)
        self.assertRegex(run.stderr, r"tuning file '[^']*/modules/[0-9a-f]{16}\.json': not JSON")
        with open(os.path.join(broken, "tuning.json"), "w") as f:
            f.write('{"format": "mlgo-env-tuning", "version": 1, "problem": "inl')
        run = build(self.fresh("broken2"), [MLGO_ENV_LAUNCH, f"--tuning={broken}"], check=False)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("tuning.json': not JSON", run.stderr)

    def test_a_departing_stream_reruns_the_compile_plainly(self):
        moved = os.path.join(self.dir, "moved-table")
        shutil.copytree(self.tuning, moved)
        for name in os.listdir(os.path.join(moved, "modules")):
            path = os.path.join(moved, "modules", name)
            doc = read_json(path)
            for e in doc["entries"]:
                e["stream"] = "0" * 64
            write_json(path, doc)
        src = self.fresh("moved")
        run = build(src, [MLGO_ENV_LAUNCH, f"--tuning={moved}", "--explain", "--no-log",
                          "--no-stale"])
        self.assertIn("departs from its tuned decisions: the compiler's stream differs",
                      run.stderr)
        plain = objects_under(self.plain)
        for module, path in objects_under(src).items():
            self.assertEqual(text_bytes(path), text_bytes(plain[module]), module)


THINLTO_A = """int helper(int x);
int twice(int x);
static int sq(int x) { return x * x; }
struct V { int a, b; int sum() const { return a + b; } };
int main(int argc, char**) { V v{argc, 2}; return helper(argc) + sq(argc) + v.sum() + twice(argc); }
"""
THINLTO_B = """int helper(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * x; return s; }
int twice(int x) { return helper(x) * 2 + helper(x + 1); }
"""
#: clang links with the lld-22 CMake found (--ld-path), as lld (-fuse-ld=lld: ThinLTO's options)
LLD = ["-fuse-ld=lld", f"--ld-path={path_of('MLGO_LLD')}"]
#: the backend command lld-22's Distributed ThinLTO gives each job (after the compiler)
BACKEND = ["-c", "--target=x86_64-pc-linux-gnu", "-O2", "-faddrsig", "-ffunction-sections",
           "-fdata-sections", "-fpic", "-Wno-unused-command-line-argument"]


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX", "MLGO_LLD")
class TunedThinLto(unittest.TestCase):
    """ThinLTO: the modules lld's backends compile (captured with --save-temps=import) are
    tuned; a link with Distributed ThinLTO runs each backend compile through the launcher
    (mlgo-env-launch --thinlto-jobs as the distributor, --tuning as the remote compiler)."""

    def test_distributed_thinlto_backends_get_their_tuned_decisions(self):
        d = tempfile.mkdtemp(prefix="mlgo-tune-thinlto-")
        try:
            for name, text in (("a.cpp", THINLTO_A), ("b.cpp", THINLTO_B)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            run = lambda *cmd: subprocess.run(cmd, cwd=d, check=True, capture_output=True,  # noqa: E731
                                              text=True, timeout=600)
            run(CXX, "-Oz", "-flto=thin", "-c", "a.cpp", "b.cpp")
            run(CXX, "-Oz", "-flto=thin", *LLD, "-Wl,--save-temps=import",
                "-Wl,--thinlto-emit-index-files", "a.o", "b.o", "-o", "plain")
            corpus, tuning = os.path.join(d, "corpus"), os.path.join(d, "tuning")
            run(MLGO_ENV, "corpus", "extract", "--input_type=directory", f"--input={d}",
                "--thinlto_build=local", f"--cmd_override={' '.join(BACKEND)}",
                f"--output_dir={corpus}")
            tune(TuneOptions("inlining", corpus, tuning, minutes=0.3, workers=2,
                             progress_every=0), lambda _: None)
            entries = {e.module: e for e in read_entries(tuning)}
            self.assertTrue(any(e.tuned_score < e.default_score for e in entries.values()))
            log = os.path.join(d, "launch.log")
            prepend = [f"--tuning={tuning}", f"--log={log}", "--", CC]
            run(CXX, "-Oz", "-flto=thin", *LLD,
                f"-fthinlto-distributor={MLGO_ENV_LAUNCH}", "-Xthinlto-distributor=--thinlto-jobs",
                f"-Wl,--thinlto-remote-compiler={MLGO_ENV_LAUNCH}",
                *[f"-Wl,--thinlto-remote-compiler-prepend-arg={a}" for a in prepend],
                "-Wl,--thinlto-remote-compiler-arg=-x", "-Wl,--thinlto-remote-compiler-arg=ir",
                "a.o", "b.o", "-o", "tuned")
            outcome = {r["source"]: r for r in log_lines(log)}
            self.assertEqual(set(outcome), {"a.o", "b.o"})
            tuned = {r["module"] for r in outcome.values() if r["outcome"] == "tuned"}
            self.assertEqual(tuned, set(entries), outcome)
            codes = [subprocess.run([os.path.join(d, p)], check=False).returncode
                     for p in ("plain", "tuned")]
            self.assertEqual(codes[0], codes[1])
            self.assertLess(text_bytes(os.path.join(d, "tuned")),
                            text_bytes(os.path.join(d, "plain")))
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
