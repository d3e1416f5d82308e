"""The corpus commands as a user runs them (run by ctest).

`mlgo-env corpus build -- make` on a two-file Makefile project, then
`corpus info` (exit 0, ThinLTO no, -Oz in use), `corpus extract` of the
recorded database with absolute outputs (the note names the root), and
`corpus info` on a broken corpus (exit 2, each problem listed); a ThinLTO
`corpus build` (lld-22) traced for each of the three problems. A plain
`corpus build -- make` on a Makefile that sets CC=gcc/CXX=g++ itself and
calls `cc` catches every compile; one calling clang by absolute path
compiles nothing through the wrappers: exit 1 and the reasons; Ctrl-C
during a build removes the wrappers and shims.

Needs MLGO_ENV (the mlgo-env executable) and clang-22 in PATH.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

MLGO_ENV = os.environ.get("MLGO_ENV", "")

MAKEFILE = """\
prog: obj/a.o obj/b.o
\t$(CC) $^ -o $@
obj/%.o: src/%.c
\t@mkdir -p obj
\t$(CC) -Oz -c $< -o $@
"""

NAMED_COMPILERS_MAKEFILE = """\
CC = gcc
CXX = g++
prog: obj/a.o obj/b.o obj/c.o
\t$(CXX) $^ -o $@
obj/a.o: src/a.c
\t@mkdir -p obj
\t$(CC) -Oz -c $< -o $@
obj/b.o: src/b.c
\t@mkdir -p obj
\tcc -O1 -c $< -o $@
obj/c.o: src/c.cpp
\t@mkdir -p obj
\t$(CXX) -Oz -c $< -o $@
"""


def run(*args, cwd=None):
    return subprocess.run([MLGO_ENV, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


class CorpusCli(unittest.TestCase):
    def setUp(self):
        self.assertTrue(MLGO_ENV, "set MLGO_ENV to the mlgo-env executable")
        self.tmp = tempfile.TemporaryDirectory(prefix="mlgo-corpus-cli-")
        self.dir = pathlib.Path(self.tmp.name)
        (self.dir / "src").mkdir()
        (self.dir / "Makefile").write_text(MAKEFILE)
        (self.dir / "src/a.c").write_text(
            "int helper(int);\nstatic int sq(int x) { return x * x; }\n"
            "int main(int c, char **v) { (void)v; return helper(c) + sq(c); }\n")
        (self.dir / "src/b.c").write_text("int helper(int x) { return x + 1; }\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_build_then_info_then_extract_elsewhere(self):
        out = run("corpus", "build", "--output_dir=corpus", "--", "make", "-s", cwd=self.dir)
        self.assertEqual(out.returncode, 0, out.stderr + out.stdout)
        self.assertIn("recorded 2 compiles", out.stdout)
        self.assertIn("extracted 2 of 2 objects", out.stdout)

        info = run("corpus", "info", str(self.dir / "corpus"))
        self.assertEqual(info.returncode, 0, info.stdout)
        self.assertIn("modules: 2", info.stdout)
        self.assertIn("ThinLTO: no", info.stdout)
        self.assertIn("optimisation levels: -Oz (2)", info.stdout)
        self.assertIn("problems: none", info.stdout)

        # The same compiles seen from another directory: absolute outputs.
        entries = json.loads((self.dir / "corpus/compile_commands.json").read_text())
        for entry in entries:
            args = entry["arguments"]
            at = args.index("-o")
            args[at + 1] = str(self.dir / args[at + 1])
            entry["directory"] = str(self.dir / "src")
        (self.dir / "abs.json").write_text(json.dumps(entries))
        out = run("corpus", "extract", f"--input={self.dir / 'abs.json'}",
                  f"--output_dir={self.dir / 'abs'}")
        self.assertEqual(out.returncode, 0, out.stderr + out.stdout)
        self.assertIn(f"common root {self.dir / 'obj'}", out.stdout)
        names = json.loads((self.dir / "abs/corpus_description.json").read_text())["modules"]
        self.assertEqual(sorted(names), ["a.o", "b.o"])

    def test_thinlto_build_then_trace_every_problem(self):
        out = run("corpus", "build", "--output_dir=corpus", "--thinlto_build=local",
                  "--cmd_override=-Oz -c", "--", "make", "-s", cwd=self.dir)
        self.assertEqual(out.returncode, 0, out.stderr + out.stdout)
        self.assertIn("extracted 2 of 2 objects", out.stdout)
        info = run("corpus", "info", str(self.dir / "corpus"))
        self.assertEqual(info.returncode, 0, info.stdout)
        self.assertIn("ThinLTO: yes", info.stdout)
        self.assertIn("global_command_override for every module: -Oz -c", info.stdout)
        for problem in ("inlining", "regalloc", "regalloc-priority"):
            trace = self.dir / f"{problem}.log"
            out = run("trace", f"--problem={problem}", f"--corpus={self.dir / 'corpus'}",
                      "--jobs=2", "--no-disk-cache", f"--output={trace}")
            self.assertEqual(out.returncode, 0, problem + out.stderr + out.stdout)
            self.assertIn("2 done", out.stdout + out.stderr, problem)
            self.assertIn("0 failed", out.stdout + out.stderr, problem)
            self.assertTrue(trace.exists(), problem)

    def test_build_catches_compilers_the_makefile_names(self):
        (self.dir / "Makefile").write_text(NAMED_COMPILERS_MAKEFILE)
        (self.dir / "src/a.c").write_text(
            "int helper(int); int twice(int);\n"
            "int main(int c, char **v) { (void)v; return helper(c) + twice(c); }\n")
        (self.dir / "src/c.cpp").write_text(
            "template <class T> T add(T a, T b) { return a + b; }\n"
            "extern \"C\" int twice(int x) { return add(x, x); }\n")
        out = run("corpus", "build", "--output_dir=corpus", "--", "make", cwd=self.dir)
        self.assertEqual(out.returncode, 0, out.stderr + out.stdout)
        self.assertIn("recorded 3 compiles", out.stdout)
        self.assertIn("extracted 3 of 3 objects", out.stdout)
        names = json.loads((self.dir / "corpus/corpus_description.json").read_text())["modules"]
        self.assertEqual(sorted(names), ["obj/a.o", "obj/b.o", "obj/c.o"])
        for name in names:
            self.assertEqual((self.dir / "corpus" / f"{name}.bc").read_bytes()[:4], b"BC\xc0\xde")
        self.assertTrue((self.dir / "prog").exists())

    def test_build_that_compiles_nothing_says_why(self):
        clang = shutil.which("clang-22")
        self.assertTrue(clang, "clang-22 not in PATH")
        (self.dir / "Makefile").write_text(
            f"obj/a.o: src/a.c\n\t@mkdir -p obj\n\t{clang} -c src/a.c -o obj/a.o\n")
        out = run("corpus", "build", "--output_dir=corpus", "--", "make", cwd=self.dir)
        self.assertEqual(out.returncode, 1, out.stderr + out.stdout)
        self.assertTrue((self.dir / "obj/a.o").exists())  # compiled, but not seen
        self.assertIn("recorded 0 compiles", out.stdout)
        self.assertIn("the build compiled nothing through the wrappers", out.stderr)
        self.assertIn(f"Makefile names a compiler by absolute path ({clang})", out.stderr)
        self.assertIn("up to date", out.stderr)
        self.assertFalse((self.dir / "corpus/corpus_description.json").exists())
        self.assertFalse((self.dir / "corpus/.mlgo-corpus-build").exists())

    def test_interrupted_build_leaves_no_wrappers(self):
        (self.dir / "Makefile").write_text("slow:\n\ttouch started && sleep 20\n")
        proc = subprocess.Popen(
            [MLGO_ENV, "corpus", "build", "--output_dir=corpus", "--", "make"], cwd=self.dir,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not (self.dir / "started").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertTrue((self.dir / "corpus/.mlgo-corpus-build/bin/gcc").is_symlink())
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGINT, err)
        self.assertIn("interrupted", err)
        self.assertFalse((self.dir / "corpus/.mlgo-corpus-build").exists())

    def test_info_lists_every_problem(self):
        corpus = self.dir / "broken"
        corpus.mkdir()
        (corpus / "corpus_description.json").write_text(json.dumps(
            {"modules": ["a.o", "b.o"], "has_thinlto": True,
             "global_command_override": ["<UNSPECIFIED>"]}))
        (corpus / "a.o.bc").write_bytes(b"BC\xc0\xdemore")
        info = run("corpus", "info", str(corpus))
        self.assertEqual(info.returncode, 2, info.stdout + info.stderr)
        self.assertIn("ThinLTO: yes", info.stdout)
        self.assertIn("problems (4):", info.stdout)
        self.assertIn("a.o: ThinLTO index", info.stdout)
        self.assertIn("b.o: bitcode", info.stdout)
        self.assertIn("placeholder", info.stdout)
        missing = run("corpus", "info", str(self.dir / "nope"))
        self.assertEqual(missing.returncode, 1)
        self.assertIn("does not exist", missing.stderr)


if __name__ == "__main__":
    unittest.main()
