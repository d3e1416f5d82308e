"""The launcher takes calls of several sources and compile-and-link calls apart (run by
ctest, label clang), with the real clang-22, on tests/data/build_styles/compile_and_link/:
one `-c` of three sources (the objects corpus build captures), a shared library from
`-shared -fPIC geom.c words.c -o libshapes.so` and a program from `main.c geom.o words.c
-o prog`.

After a short inlining tune of the captured corpus, a build with every call through
`mlgo-env-launch --tuning=DIR`:
- each object of the `-c` call is where clang puts it, with the executable bytes of the
  same source compiled alone through the launcher (the tested one-source route), and so
  the bytes tune recorded for the modules it tuned;
- the program's executable bytes are those of the link of those objects (main, geom,
  words: order kept), and differ from the plain build's; the library's are those of a link
  of the sources compiled alone with `-shared -fPIC -c` through the launcher (the module
  names a compile-and-link's source gets are those of `-c` in its directory);
- the program prints what the plain one prints; the log has one line per source, those
  of a link naming it; the launcher's temporary directory is gone.
A compile-and-link whose source fails links nothing, and leaves nothing; a call that
cannot be taken apart (-MD in a compile-and-link) passes through, and --explain says why;
SIGINT during a compile of a compile-and-link leaves no clang, no fifo and no object.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR and clang-22 like test_tune; a missing
one fails the suite.
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
from test_launch import (CC, MLGO_ENV, MLGO_ENV_LAUNCH, executable_sections,  # noqa: E402
                         processes_naming, text_bytes)

from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.status import log_lines  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402

STYLES_DIR = os.path.join(CHECKOUT, "tests", "data", "build_styles")
STYLE = "compile_and_link"
MODULES = ("geom", "words", "main")


class LaunchSplit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [name for name, path in (
            ("clang-22", CC), ("mlgo-env (MLGO_ENV)", MLGO_ENV),
            ("mlgo-env-launch (MLGO_ENV_LAUNCH)", MLGO_ENV_LAUNCH)) if not path]
        if missing:
            raise AssertionError("this suite needs the real programs, missing: "
                                 + ", ".join(missing))
        cls.dir = tempfile.mkdtemp(prefix="mlgo-launch-split-")
        try:
            cls.scratch = os.path.join(cls.dir, "tmp")  # the launcher's TMPDIR
            os.mkdir(cls.scratch)
            cls.env = dict(os.environ, TMPDIR=cls.scratch)
            cls.plain = cls.make("plain", CC)
            corpus = os.path.join(cls.dir, "corpus")
            cls.make("captured", None, [MLGO_ENV, "corpus", "build", f"--output_dir={corpus}",
                                        "--"])
            with open(os.path.join(corpus, "corpus_description.json")) as f:
                modules = json.load(f)["modules"]  # the compile-and-link calls: none
            if sorted(modules) != sorted(f"{m}.o" for m in MODULES):
                raise AssertionError(f"corpus build captured {modules}")
            cls.tuning = os.path.join(cls.dir, "tuning")
            cls.said = []
            tune(TuneOptions("inlining", corpus, cls.tuning, minutes=1.0, workers=2,
                             progress_every=0), cls.said.append)
            cls.entries = {e.module: e for e in read_entries(cls.tuning)}
        except BaseException:
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        for pid in processes_naming(cls.scratch):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def make(cls, label, cc, wrap=()):
        """A fresh copy of the style built by make with `cc` as CC (None: corpus build's)."""
        root = os.path.join(cls.dir, label)
        shutil.copytree(STYLES_DIR, root)
        src = os.path.join(root, STYLE)
        env = dict(cls.env, CFLAGS="-Oz")
        if cc:
            env["CC"] = cc
        run = subprocess.run(list(wrap) + ["make", "-j2"], cwd=src, env=env,
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            raise AssertionError(f"make ({label}) failed:\n{run.stdout}{run.stderr}")
        return src

    def launch(self, args, cwd, log, *extra, check=True):
        r = subprocess.run([MLGO_ENV_LAUNCH, f"--tuning={self.tuning}", f"--log={log}", *extra,
                            "--", CC] + args, cwd=cwd, env=self.env, capture_output=True,
                           text=True, timeout=600)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def log_lines(self, log):
        with open(log) as f:
            return [json.loads(line) for line in f]

    def test_launched_build_has_the_tuned_code(self):
        log = os.path.join(self.dir, "build.log")
        launched = self.make("launched", f"{MLGO_ENV_LAUNCH} --tuning={self.tuning} --log={log} "
                                         f"-- {CC}")
        self.assertEqual(os.listdir(self.scratch), [])
        # The reference: each source compiled alone through the launcher.
        ref = os.path.join(self.dir, "reference")
        os.makedirs(os.path.join(ref, "pic"))
        for m in MODULES:
            self.launch(["-Oz", "-I../src", "-c", f"../src/{m}.c", "-o",
                         os.path.join(ref, f"{m}.o")], launched, os.path.join(ref, "log"))
            self.launch(["-Oz", "-I../src", "-shared", "-fPIC", "-c", f"../src/{m}.c", "-o",
                         os.path.join(ref, "pic", f"{m}.o")], launched, os.path.join(ref, "log"))
        smaller = 0
        for m in MODULES:
            got = executable_sections(os.path.join(launched, f"{m}.o"))
            self.assertEqual(got, executable_sections(os.path.join(ref, f"{m}.o")), m)
            entry = self.entries.get(f"{m}.o")
            if entry:
                self.assertEqual(text_bytes(os.path.join(launched, f"{m}.o")),
                                 entry.tuned_score, (m, self.said))
                smaller += entry.tuned_score < entry.default_score
        self.assertGreater(smaller, 0, self.said)  # so the program's code differs
        objects = [os.path.join(ref, f"{m}.o") for m in ("main", "geom", "words")]
        subprocess.run([CC, "-Oz"] + objects + ["-o", os.path.join(ref, "prog")], check=True)
        pic = [os.path.join(ref, "pic", f"{m}.o") for m in ("geom", "words")]
        subprocess.run([CC, "-Oz", "-shared", "-fPIC"] + pic +
                       ["-o", os.path.join(ref, "libshapes.so")], check=True)
        for linked in ("prog", "libshapes.so"):
            self.assertEqual(executable_sections(os.path.join(launched, linked)),
                             executable_sections(os.path.join(ref, linked)), linked)
        self.assertNotEqual(executable_sections(os.path.join(launched, "prog")),
                            executable_sections(os.path.join(self.plain, "prog")))
        out = [subprocess.run([os.path.join(d, "prog"), "hello there 42"], capture_output=True,
                              text=True, check=True).stdout for d in (self.plain, launched)]
        self.assertEqual(out[0], out[1])
        lines = self.log_lines(log)
        self.assertEqual(sorted((r["source"], r.get("linked_into", "")) for r in lines),
                         sorted([(f"../src/{m}.c", "") for m in MODULES] +
                                [("../src/geom.c", "libshapes.so"),
                                 ("../src/words.c", "libshapes.so"),
                                 ("../src/main.c", "prog"), ("../src/words.c", "prog")]))
        for r in lines:
            self.assertEqual(r["output"], os.path.basename(r["source"])[:-2] + ".o", r)
            if r["output"] in self.entries and r.get("linked_into") != "libshapes.so":
                self.assertEqual(r["outcome"], "tuned", r)
        # tune status counts a compile-and-link's sources apart from the -c of the same module
        self.assertIn(f"launcher log {log}: 7 compiles,", next(log_lines(log)))

    def test_failed_source_links_nothing_and_leaves_nothing(self):
        work = tempfile.mkdtemp(dir=self.dir)
        with open(os.path.join(work, "ok.c"), "w") as f:
            f.write("int ok(int x) { return x + 1; }\n")
        with open(os.path.join(work, "bad.c"), "w") as f:
            f.write("int main(void) { return missing; }\n")
        r = self.launch(["-Oz", "ok.c", "bad.c", "-o", "p"], work, os.path.join(work, "log"),
                        check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("bad.c", r.stderr)
        self.assertIn("missing", r.stderr)  # clang's own error
        self.assertEqual(sorted(os.listdir(work)), ["bad.c", "log", "ok.c"])
        self.assertEqual(os.listdir(self.scratch), [])

    def test_what_cannot_be_taken_apart_passes_through(self):
        work = tempfile.mkdtemp(dir=self.dir)
        src = os.path.join(STYLES_DIR, "src")
        r = self.launch(["-Oz", f"-I{src}", "-MD", f"{src}/main.c", f"{src}/geom.c",
                         f"{src}/words.c", "-o", "p"], work, os.path.join(work, "log"),
                        "--explain")
        self.assertIn("passes through: -MD in a compile-and-link", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(work, "p")))
        self.assertFalse(os.path.exists(os.path.join(work, "log")))  # nothing launched
        r = self.launch(["-Oz", f"-I{src}", f"{src}/main.c", f"{src}/geom.c", f"{src}/words.c",
                         "-o", "q"], work, os.path.join(work, "log"), "--explain")
        self.assertIn("splits the call: 3 sources compiled alone, then linked into q",
                      r.stderr)
        self.assertEqual(len(self.log_lines(os.path.join(work, "log"))), 3)

    def test_sigint_leaves_no_clang_no_fifo_and_no_object(self):
        work = tempfile.mkdtemp(dir=self.dir)
        with open(os.path.join(work, "small.c"), "w") as f:
            f.write("int small(int x) { return x * 3; }\n")
        with open(os.path.join(work, "big.c"), "w") as f:  # many decisions: a slow compile
            f.write("".join(f"static int f{j}(int x) {{ return x * {j % 7 + 2} + f{j - 1}(x ^ "
                            f"{j}); }}\n" if j else "static int f0(int x) { return x; }\n"
                            for j in range(4000)))
            f.write("int main(void) { return f3999(3) & 1; }\n")
        launch = subprocess.Popen([MLGO_ENV_LAUNCH, f"--tuning={self.tuning}", "--no-log", "--",
                                   CC, "-Oz", "small.c", "big.c", "-o", "p"], cwd=work,
                                  env=self.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        # Interrupted while big.c compiles: small.c's object is in the launcher's directory.
        deadline = time.time() + 120
        while time.time() < deadline and not (
                any(os.path.exists(os.path.join(self.scratch, d, "0-small.o"))
                    for d in os.listdir(self.scratch))
                and processes_naming("interactive-channel-base=" + self.scratch)):
            time.sleep(0.01)
        time.sleep(0.05)
        self.assertIsNone(launch.poll(), "the launcher ended before it could be interrupted")
        launch.send_signal(signal.SIGINT)
        _, err = launch.communicate(timeout=60)
        self.assertNotEqual(launch.returncode, 0)
        self.assertIn("interrupted (SIGINT)", err)
        time.sleep(0.2)
        self.assertEqual(processes_naming(self.scratch), [])
        self.assertEqual(os.listdir(self.scratch), [])
        self.assertEqual(sorted(os.listdir(work)), ["big.c", "small.c"])


if __name__ == "__main__":
    unittest.main()
