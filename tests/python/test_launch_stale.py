"""`mlgo-env-launch --tuning` on a module edited after it was tuned (ctest, label clang).

A small C program of one module, `keep()` and `edit()` with helpers of their own, is captured
at -Oz (`-ffunction-sections`: each function's bytes apart), tuned briefly with the real
clang-22, then one function is edited (`edit()` gains a call site; `keep()` and its call sites
are untouched) and built through the launcher:

- the log says `stale` with how many decisions came from the entry: some, not all;
- `keep()`'s bytes are the tuned build's, and not the plain build's (so the check could
  fail), while the edited function gets clang's own decisions where its sites changed;
- the program prints what the plain build of the edited source prints;
- `tune status` counts the compile as kept by call site; `--no-stale` gives the plain object.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR and MLGO_CLANG (ctest sets them;
real_tools.py): a missing one fails.
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

from mlgo_env.elf import executable_sections  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402

CC = path_of("MLGO_CLANG")
MLGO_ENV, MLGO_ENV_LAUNCH = path_of("MLGO_ENV"), path_of("MLGO_ENV_LAUNCH")

SOURCE = r"""#include <stdio.h>

static int mix(int a, int b) {
  int r = a * 31 + b;
  r ^= r >> 7;
  r += (a & 15) * (b | 3);
  return r % 1009;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static int scale(const int *v, int n, int k) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += mix(v[i], k) - clampi(v[i], -k, k);
  return s;
}

int keep(const int *v, int n) {
  int a = scale(v, n, 3) + mix(n, 5);
  int b = scale(v, n / 2, 7) + mix(a, n);
  int c = clampi(a - b, -100, 100) + mix(b, 9) + clampi(b, 0, 50);
  return a + b + c + mix(c, a) + clampi(c, -9, 9);
}

static int poly(int x, int k) {
  int r = x;
  for (int i = 0; i < k; ++i)
    r = r * x + i * 3 - (r >> 3);
  return r & 0xffff;
}

static int tri(int x) { return x < 0 ? -x * 2 + 1 : x * 3 - (x >> 1); }

int edit(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += poly(v[i], 3) ^ tri(v[i]);
  s += poly(n, 5) + tri(s) + poly(s & 7, 2);
  return s + tri(n); /*EDIT*/
}

int main(int argc, char **argv) {
  (void)argv;
  int v[16];
  for (int i = 0; i < 16; ++i)
    v[i] = (i * 37 + argc) % 23 - 11;
  printf("%d %d\n", keep(v, 16), edit(v, 16));
  return 0;
}
"""

MAKEFILE = """CFLAGS ?= -Oz
prog: src/m.o
\t$(CC) -o $@ src/m.o
src/m.o: src/m.c
\t$(CC) $(CFLAGS) -ffunction-sections -c src/m.c -o src/m.o
clean:
\trm -f prog src/m.o
"""

EDITED = ("return s + tri(n); /*EDIT*/", "return s + tri(n) + tri(s ^ n); /*EDIT*/")


def project(root, edited=False):
    os.makedirs(os.path.join(root, "src"))
    with open(os.path.join(root, "Makefile"), "w") as f:
        f.write(MAKEFILE)
    with open(os.path.join(root, "src", "m.c"), "w") as f:
        f.write(SOURCE.replace(*EDITED) if edited else SOURCE)
    return root


def make(root, cc):
    subprocess.run(["make", f"CC={cc}"], cwd=root, check=True, capture_output=True, text=True,
                   timeout=600)
    return (dict(executable_sections(os.path.join(root, "src", "m.o"))),
            subprocess.run([os.path.join(root, "prog")], check=True, capture_output=True,
                           text=True).stdout)


def log_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG")
class StaleEntry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-stale-test-")
        try:
            cls.prepare()
        except BaseException:  # tearDownClass does not run after a failed setUpClass
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def prepare(cls):
        src = project(os.path.join(cls.dir, "captured"))
        cls.corpus, cls.tuning = os.path.join(cls.dir, "corpus"), os.path.join(cls.dir, "tuning")
        subprocess.run([MLGO_ENV, "corpus", "build", f"--output_dir={cls.corpus}", "--",
                        "make"], cwd=src, check=True, capture_output=True, timeout=600)
        tune(TuneOptions("inlining", cls.corpus, cls.tuning, minutes=0.3, workers=2,
                         progress_every=0), lambda _: None)
        cls.entry = {e.module: e for e in read_entries(cls.tuning)}["src/m.o"]
        cls.tuned, cls.tuned_output = make(project(os.path.join(cls.dir, "tuned")),
                                           cls.launcher("--no-log"))
        cls.plain, cls.plain_output = make(project(os.path.join(cls.dir, "plain"), True), CC)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def launcher(cls, *extra):
        return " ".join([MLGO_ENV_LAUNCH, f"--tuning={cls.tuning}", *extra, "--", CC])

    def test_the_edited_module_keeps_its_unchanged_functions_tuned_decisions(self):
        self.assertIsNotNone(self.entry.sites, "the record wrote no site keys")
        self.assertEqual(len(self.entry.sites), 8 * len(self.entry.actions))
        self.assertNotEqual(self.tuned[".text.keep"], self.plain[".text.keep"],
                            "tuning did not change keep(): the test could not tell")
        log = os.path.join(self.dir, "stale.log")
        built, output = make(project(os.path.join(self.dir, "stale"), True),
                             self.launcher(f"--log={log}"))
        (line,) = log_lines(log)
        self.assertEqual(line["outcome"], "stale", line)
        self.assertEqual(line["module"], "src/m.o")
        self.assertGreater(line["from_entry"], 0, line)
        self.assertLess(line["from_entry"], line["decisions"], line)  # edit()'s new sites
        self.assertEqual(built[".text.keep"], self.tuned[".text.keep"])
        self.assertEqual(built[".text.scale"], self.tuned[".text.scale"])
        self.assertEqual(output, self.plain_output)
        self.assertLess(sum(map(len, built.values())), sum(map(len, self.plain.values())))
        status = subprocess.run([sys.executable, "-m", "mlgo_env.tune", "status",
                                 f"--tuning={self.tuning}", f"--log={log}"],
                                capture_output=True, text=True, check=True,
                                env=dict(os.environ,
                                         PYTHONPATH=os.path.join(CHECKOUT, "python")))
        self.assertIn(f"1 changed but keeping their unchanged call sites' "
                      f"({line['from_entry']} of {line['decisions']} decisions)", status.stdout)
        self.assertIn("kept by call site: src/m.c", status.stdout)

    def test_without_the_stale_route_the_edited_module_is_the_plain_one(self):
        log = os.path.join(self.dir, "exact.log")
        built, output = make(project(os.path.join(self.dir, "exact"), True),
                             self.launcher("--no-stale", f"--log={log}"))
        (line,) = log_lines(log)
        self.assertEqual(line["outcome"], "fallback", line)
        self.assertEqual(built, self.plain)
        self.assertEqual(output, self.plain_output)
        # Unedited, the module gets exactly the tuned object, as before.
        self.assertEqual(sum(map(len, self.tuned.values())), self.entry.tuned_score)


if __name__ == "__main__":
    unittest.main()
