"""`python -m mlgo_env.tune pick`: a regalloc table's hot functions chosen by what a real
workload executes (ctest, label clang; clang-22, mlgo-env-launch and valgrind).

tests/data/workload_project (`crunch`: three hot functions under register pressure, one of
them, `scan`, with its hot path hinted as rare) is captured at -O2 and tuned to the end of
its searches; then pick runs the project's own make through the launcher and `crunch 200`
under valgrind:

- each hot function's chosen candidate is the one whose build executed it least, and the
  written table is the one whose workload executed fewest instructions; on `scan` that is
  not the static best (its static frequencies are wrong), and the table as tune wrote it
  executes more there;
- a build through the launcher with the written table, made and measured by the test
  (not pick), gives every entry's module `tuned`, objects with exactly the executable bytes
  of the entries replayed by the environment, the per-function instruction counts pick
  reported for the picked table, and the plain build's output;
- a failing workload, one that outlives --timeout (killed with what it started) and a build
  that bypasses the launcher end pick with a clear error, exit 1, the tuning directory as
  it was and no scratch directory left.
"""
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(CHECKOUT, "python"))
from mlgo_env.elf import executable_sections  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402
from mlgo_env.tuning.workload import read_cachegrind  # noqa: E402
from real_tools import needs, path_of  # noqa: E402
from test_launch import CC, MLGO_ENV_LAUNCH  # noqa: E402
from test_tune import corpus_of, log_lines, read_json  # noqa: E402
from test_tune_regalloc import replay  # noqa: E402

PROJECT = os.path.join(CHECKOUT, "tests", "data", "workload_project")
ROUNDS = "200"
MODULES = ("src/mix.o", "src/filter.o", "src/scan.o", "src/main.o")


def make(src, cc):
    """make clean, then make with `cc` as the compiler."""
    subprocess.run(["make", "-s", "clean"], cwd=src, check=True, capture_output=True)
    subprocess.run(["make", "-s", f"CC={cc}", "CFLAGS=-O2"], cwd=src, check=True,
                   capture_output=True, timeout=600)


def counts_of(src, scratch):
    """Per-function instructions of `crunch ROUNDS` in `src`, measured by valgrind here."""
    out = os.path.join(scratch, "cachegrind.out")
    subprocess.run([path_of("MLGO_VALGRIND"), "--tool=cachegrind", "--cache-sim=no",
                    "--demangle=no", f"--cachegrind-out-file={out}", "./crunch", ROUNDS],
                   cwd=src, check=True, capture_output=True, timeout=600)
    return read_cachegrind(out).functions


def digest(directory):
    """SHA-256 over every file of `directory` (names and bytes)."""
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(directory)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            h.update(os.path.relpath(path, directory).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_VALGRIND")
class WorkloadPick(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-tune-pick-")
        captured = cls.fresh("captured")
        cls.corpus = os.path.join(cls.dir, "corpus")
        corpus_of(captured, cls.corpus, "-O2")
        cls.tuned = os.path.join(cls.dir, "tuned")
        tune(TuneOptions("regalloc", cls.corpus, cls.tuned, minutes=3, workers=2,
                         progress_every=0), lambda _: None)
        states = [read_json(os.path.join(cls.tuned, "state", f))
                  for f in os.listdir(os.path.join(cls.tuned, "state"))]
        assert {s["status"] for s in states} == {"done"}, "a search did not end in 3 min"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def fresh(cls, name):
        path = os.path.join(cls.dir, name)
        shutil.copytree(PROJECT, path)
        return path

    def pick(self, name, build=None, workload=None, timeout=600):
        """Runs `python -m mlgo_env.tune pick` on a copy of the tuned table; (the run, the
        table, the project copy, the scratch directory)."""
        tuning = os.path.join(self.dir, name + "-tuning")
        shutil.copytree(self.tuned, tuning)
        src, scratch = self.fresh(name), os.path.join(self.dir, name + "-scratch")
        os.mkdir(scratch)
        # the shell expands $MLGO_TUNING (make would read "$M" as its own variable)
        launcher = f"{shlex.quote(MLGO_ENV_LAUNCH)} --tuning=$MLGO_TUNING -- {CC}"
        run = subprocess.run(
            [sys.executable, "-m", "mlgo_env.tune", "pick", f"--tuning={tuning}",
             f"--corpus={self.corpus}", f"--directory={src}", f"--temp-dir={scratch}",
             f"--timeout={timeout}",
             "--build=" + (build or f'make -s clean && make -s CC="{launcher}" CFLAGS=-O2'),
             "--workload=" + (workload or f'"$MLGO_RUN" ./crunch {ROUNDS} > /dev/null')],
            capture_output=True, text=True, timeout=1800,
            env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")))
        return run, tuning, src, scratch

    def test_the_pick_keeps_what_executes_least_and_the_launcher_reproduces_it(self):
        run, tuning, src, scratch = self.pick("picked")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(os.listdir(scratch), [])
        doc = read_json(os.path.join(tuning, "workload.json"))
        runs = {r["name"]: r for r in doc["runs"]}
        k = doc["candidates"]
        functions = {f["name"]: f for f in doc["functions"]}
        self.assertEqual(set(functions), {"mix", "filter", "scan"})
        for name, f in functions.items():
            counts = [f["instructions"][f"candidate {v}"] for v in range(k)]
            self.assertEqual(f["chosen"], counts.index(min(counts)), name)
        totals = {n: r["instructions"] for n, r in runs.items()}
        self.assertEqual(totals[doc["chosen"]], min(totals.values()), totals)
        self.assertEqual(doc["chosen"], "picked", run.stdout)
        scan = functions["scan"]["instructions"]
        self.assertLess(scan["picked"], scan["tuned"], run.stdout)
        self.assertNotEqual(functions["scan"]["chosen"], 0, run.stdout)
        self.check_build(tuning, functions)

    def check_build(self, tuning, functions):
        """The test's own launcher build with the written table, and with the old one."""
        entries = {e.module: e for e in read_entries(tuning)}
        built, plain, before = self.fresh("rebuilt"), self.fresh("plain"), self.fresh("before")
        make(plain, CC)
        log = os.path.join(self.dir, "rebuilt.log")
        make(built, f"{MLGO_ENV_LAUNCH} --tuning={tuning} --log={log} -- {CC}")
        outcome = {r["output"]: r["outcome"] for r in log_lines(log)}
        self.assertEqual({m for m, o in outcome.items() if o == "tuned"}, set(entries))
        for module in MODULES:
            ours = executable_sections(os.path.join(built, module))
            if module not in entries:
                self.assertEqual(ours, executable_sections(os.path.join(plain, module)))
                continue
            scratch = os.path.join(self.dir, "replay-" + module.replace("/", "_"))
            os.mkdir(scratch)
            self.assertEqual(ours, replay(self.corpus, entries[module], scratch)[0], module)
        counts = counts_of(built, self.dir)
        for name, f in functions.items():
            self.assertEqual(counts[name], f["instructions"]["picked"], name)
        make(before, f"{MLGO_ENV_LAUNCH} --tuning={self.tuned} --no-log -- {CC}")
        self.assertEqual(counts_of(before, self.dir)["scan"],
                         functions["scan"]["instructions"]["tuned"])
        outputs = {subprocess.run(["./crunch", ROUNDS], cwd=d, capture_output=True,
                                  check=True).stdout for d in (built, plain, before)}
        self.assertEqual(len(outputs), 1)

    def check_refused(self, run, tuning, scratch, message):
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn(message, run.stderr)
        self.assertIn(f"{tuning} is as it was", run.stderr)
        self.assertEqual(digest(tuning), digest(self.tuned))
        self.assertEqual(os.listdir(scratch), [])

    def test_a_failing_workload_leaves_the_table_as_it_was(self):
        run, tuning, _, scratch = self.pick("failing", workload='echo "no input"; exit 3')
        self.check_refused(run, tuning, scratch, "the workload failed (exit status 3)")
        self.assertIn("no input", run.stderr)

    def test_a_hanging_workload_is_killed_and_leaves_the_table_as_it_was(self):
        pidfile = os.path.join(self.dir, "hanging.pid")
        run, tuning, _, scratch = self.pick(
            "hanging", timeout=20,
            workload=f'"$MLGO_RUN" ./crunch 1 > /dev/null; sleep 600 & echo $! > {pidfile}; '
                     "wait")
        self.check_refused(run, tuning, scratch, "did not finish within 20 s (killed)")
        with open(pidfile) as f:
            pid = int(f.read())
        try:
            with open(f"/proc/{pid}/stat") as f:  # a zombie nobody reaps is not running
                self.assertEqual(f.read().rsplit(")", 1)[1].split()[0], "Z")
        except FileNotFoundError:
            pass

    def test_a_build_that_bypasses_the_launcher_is_refused(self):
        run, tuning, _, scratch = self.pick("bypass", build="make -s clean && make -s CFLAGS=-O2")
        self.check_refused(run, tuning, scratch, "compiled nothing through the launcher")


if __name__ == "__main__":
    unittest.main()
