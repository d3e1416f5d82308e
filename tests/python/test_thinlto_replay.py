"""The inline-replay file of a ThinLTO build, applied by lld's in-process backends (ctest
python.test_thinlto_replay, label clang; real clang-22 and lld-22).

tests/data/thinlto_project (launch_project's C and C++ sources, -Oz -flto=thin
-gline-tables-only -fdebug-compilation-dir=.) is linked with `--save-temps=import`; the
modules lld's backends compile are extracted as a ThinLTO corpus, tuned for half a minute by
`python -m mlgo_env.tune`, which then writes the replay file from the backends' commands.
Every build is made in a directory of its own (not the capture's):

- `plain`: lld's own ThinLTO; `replay`: the same link with DIR/inline-replay.ldflags
  (`-Wl,-mllvm,-cgscc-inline-replay=...`), no launcher; `dtlto`: Distributed ThinLTO with
  each backend compile through mlgo-env-launch and the table (the launcher's route);
- a program all of whose modules the writer calls exact has in the `replay` link exactly
  the `dtlto` link's executable bytes, and at least one program differs from `plain` (so
  the check could fail); every program prints what `plain` prints; the launcher's log says
  every module with an entry got it (the stream with line locations is the tuned one);
- a corpus captured without line locations is refused, naming the flag, and writes nothing.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG, MLGO_CLANGXX and MLGO_LLD
(ctest sets them; real_tools.py): a missing one fails.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(CHECKOUT, "python"))
from real_tools import needs, path_of  # noqa: E402
from test_launch import CC, CXX, MLGO_ENV, MLGO_ENV_LAUNCH  # noqa: E402

from mlgo_env.elf import executable_bytes  # noqa: E402
from mlgo_env.tuning.inline_replay import write_replay_file  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402

PROJECT = os.path.join(CHECKOUT, "tests", "data", "thinlto_project")
SRC = os.path.join(CHECKOUT, "tests", "data", "launch_project", "src")
#: lld's Distributed ThinLTO backend command, after the compiler (docs/tuning.md)
BACKEND = ("-c --target=x86_64-pc-linux-gnu -O2 -faddrsig -ffunction-sections "
           "-fdata-sections -fpic -Wno-unused-command-line-argument")
FLAGS = "-Oz -flto=thin -gline-tables-only -fdebug-compilation-dir=."
PROGRAMS = {"ctool": "c/", "cxxtool": "x/"}   # program: the object directory it links


def make(where, cflags, ldflags):
    """Builds the project in `where` (a fresh directory) with lld."""
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    lld = f"-fuse-ld=lld --ld-path={path_of('MLGO_LLD')}"
    subprocess.run(["make", "-s", "-j2", "-f", os.path.join(PROJECT, "Makefile"), f"SRC={SRC}",
                    f"CC={CC}", f"CXX={CXX}", f"CFLAGS={cflags}", f"LDFLAGS={lld} {ldflags}"],
                   cwd=where, check=True, capture_output=True, text=True, timeout=600)


def capture(where, corpus, cflags):
    make(where, cflags, "-Wl,--save-temps=import -Wl,--thinlto-emit-index-files")
    subprocess.run([MLGO_ENV, "corpus", "extract", "--input_type=directory", f"--input={where}",
                    "--thinlto_build=local", f"--cmd_override={BACKEND}",
                    f"--output_dir={corpus}"], check=True, capture_output=True, timeout=600)


def launcher_link(tuning, log):
    """Distributed ThinLTO with every backend compile through the launcher and `tuning`."""
    prepend = [f"--tuning={tuning}", f"--log={log}", "--", CC]
    return " ".join([f"-fthinlto-distributor={MLGO_ENV_LAUNCH}",
                     "-Xthinlto-distributor=--thinlto-jobs",
                     f"-Wl,--thinlto-remote-compiler={MLGO_ENV_LAUNCH}"] +
                    [f"-Wl,--thinlto-remote-compiler-prepend-arg={a}" for a in prepend] +
                    ["-Wl,--thinlto-remote-compiler-arg=-x", "-Wl,--thinlto-remote-compiler-arg=ir"])


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX", "MLGO_LLD")
class ThinLtoReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-thinlto-replay-")
        try:
            cls.corpus, cls.tuning = (os.path.join(cls.dir, n) for n in ("corpus", "tuning"))
            capture(os.path.join(cls.dir, "capture"), cls.corpus, FLAGS)
            cls.tune = subprocess.run(
                [sys.executable, "-m", "mlgo_env.tune", "--problem=inlining",
                 f"--corpus={cls.corpus}", f"--output={cls.tuning}", "--minutes=0.5",
                 "--workers=2", f"--launcher={MLGO_ENV_LAUNCH}"],
                env=dict(os.environ, PYTHONPATH=os.path.join(CHECKOUT, "python")),
                capture_output=True, text=True, timeout=900)
            if cls.tune.returncode != 0:
                raise AssertionError(cls.tune.stdout + cls.tune.stderr)
            with open(os.path.join(cls.tuning, "inline-replay.ldflags")) as f:
                ldflags = f.read().strip()
            cls.log = os.path.join(cls.dir, "launch.log")
            cls.builds = {side: os.path.join(cls.dir, side) for side in ("plain", "replay", "dtlto")}
            make(cls.builds["plain"], FLAGS, "")
            make(cls.builds["replay"], FLAGS, ldflags)
            make(cls.builds["dtlto"], FLAGS, launcher_link(cls.tuning, cls.log))
        except BaseException:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def report(self):
        with open(os.path.join(self.tuning, "inline-replay.json")) as f:
            return json.load(f)

    def test_tune_writes_the_link_flags_and_the_compile_flags(self):
        summary = self.report()["summary"]
        self.assertTrue(summary["thinlto"])
        path = os.path.join(self.tuning, "inline-replay.txt")
        self.assertEqual(summary["ldflags"], [f"-Wl,-mllvm,-cgscc-inline-replay={path}",
                                              "-Wl,-mllvm,-cgscc-inline-replay-format=LineColumn"])
        with open(os.path.join(self.tuning, "inline-replay.flags")) as f:
            self.assertEqual(f.read().split(), ["-gline-tables-only", "-fdebug-compilation-dir=."])
        self.assertGreater(summary["lines"], 0, self.tune.stdout)
        self.assertIn("LDFLAGS+=", self.tune.stdout)

    def test_lld_backends_with_the_file_link_what_the_launcher_route_links(self):
        modules = self.report()["modules"]
        compared = 0
        for program, objects in PROGRAMS.items():
            path = {s: os.path.join(root, program) for s, root in self.builds.items()}
            outputs = {s: subprocess.run([p], capture_output=True, text=True, check=True).stdout
                       for s, p in path.items()}
            self.assertEqual(outputs["replay"], outputs["plain"], program)
            self.assertEqual(outputs["dtlto"], outputs["plain"], program)
            mine = [m for m in modules if m["module"].startswith(objects)]
            if not mine or not all(m["exact"] for m in mine):
                continue
            code = {s: executable_bytes(p) for s, p in path.items()}
            self.assertEqual(code["replay"], code["dtlto"], f"{program}: {mine}")
            compared += code["dtlto"] != code["plain"]
        self.assertGreater(compared, 0, "no program whose every module is exact differs from "
                           f"the plain link: {modules}")

    def test_the_launcher_route_finds_every_entry_with_line_locations(self):
        with open(self.log) as f:
            outcomes = [json.loads(line) for line in f if line.strip()]
        tuned = {r["module"] for r in outcomes if r["outcome"] == "tuned"}
        self.assertEqual(tuned, {e.module for e in read_entries(self.tuning)}, outcomes)

    def test_a_corpus_without_line_locations_is_refused_and_nothing_written(self):
        bare, tuning = os.path.join(self.dir, "bare-corpus"), os.path.join(self.dir, "t2")
        capture(os.path.join(self.dir, "bare"), bare, "-Oz -flto=thin")
        shutil.copytree(self.tuning, tuning)
        before = {n: os.path.getmtime(os.path.join(tuning, n)) for n in os.listdir(tuning)}
        with self.assertRaises(ValueError) as e:
            write_replay_file(tuning, bare, MLGO_ENV_LAUNCH, 2, lambda _: None)
        self.assertIn("carry no line locations", str(e.exception))
        self.assertIn("-gline-tables-only", str(e.exception))
        self.assertEqual(before, {n: os.path.getmtime(os.path.join(tuning, n))
                                  for n in os.listdir(tuning)})


if __name__ == "__main__":
    unittest.main()
