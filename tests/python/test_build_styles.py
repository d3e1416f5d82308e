"""Every build style through `mlgo-env corpus build`, `tune` and the inline-replay file, with
the real clang-22 (ctest, label clang), on the small projects of tests/data/build_styles/
(one directory per style, over the shared sources in src/):

    no_o               `$(CC) -c ../src/x.c`: the compiler names the object (x.o, here)
    multi_source       `$(CC) -c a.c b.c c.c`: several sources in one compile
    response_file      `@flags.rsp`, and a response file holding -c and -o that the build
                       deletes after the compile (as Ninja does)
    depfiles           -MMD -MP -MF .deps/x.d -MT x.o, and -Wp,-MMD,.deps/x.d -MQ x.o
    obj_outside        `cd ../src && $(CC) -c x.c -o ../obj_outside/obj/x.o`
    cmake_out_of_tree  cmake -S . -B build (sources by absolute path, -MD -MT -MF)
    libtool_twins      x.o and .libs/x.o (-fPIC -DPIC) from one source, libtool's flags

For each style:
- corpus build captures every object the build writes, each named as docs/corpora.md says;
- the replay writer's lookup (replay_lines.compile_commands, the corpus layer's reader in
  the core) gives every module a compile that, run alone with its own -o (no other source,
  no dependency file), gives the build's object, executable bytes equal (libtool's twins,
  which differ, each their own);
- a short inlining tune, then the replay file: it covers every module (each compiled and
  checked), has lines, and a stock clang-22 build of the style with its flags gives every
  module the report calls exact exactly the tuned executable bytes, at least one of them
  below clang's own; the program prints what the captured build's prints.

Needs MLGO_ENV, MLGO_ENV_LAUNCH and MLGO_ENV_CORE_DIR like test_tune, cmake and llvm-dis-22;
a missing one fails the suite.
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
from test_launch import CC, MLGO_ENV, MLGO_ENV_LAUNCH, objects_under, text_bytes  # noqa: E402

from mlgo_env.tuning.inline_replay import write_replay_file  # noqa: E402
from mlgo_env.tuning.replay_cache import source_digest  # noqa: E402
from mlgo_env.tuning.replay_lines import compile_commands  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402

STYLES_DIR = os.path.join(CHECKOUT, "tests", "data", "build_styles")
THREE = {"geom.o", "words.o", "main.o"}
CMAKE = "cmake -S . -B build -G 'Unix Makefiles' && cmake --build build -j2"
#: style -> (build command, where module names start (relative to the style), the modules,
#: the program)
STYLES = {
    "no_o": (["make", "-j2"], ".", THREE, "prog"),
    "multi_source": (["make", "-j2"], ".", THREE, "prog"),
    "response_file": (["make", "-j2"], ".", THREE, "prog"),
    "depfiles": (["make", "-j2"], ".", THREE, "prog"),
    "obj_outside": (["make", "-j2"], "obj", THREE, "prog"),
    "cmake_out_of_tree": (["sh", "-c", CMAKE], os.path.join("build", "src"),
                          {"CMakeFiles/shapes.dir/geom.c.o", "CMakeFiles/shapes.dir/words.c.o",
                           "CMakeFiles/prog.dir/main.c.o"}, os.path.join("build", "src", "prog")),
    "libtool_twins": (["make", "-j2"], ".", {".libs/geom.o", "geom.o", ".libs/words.o",
                                             "words.o", "main.o"}, "prog"),
}
DEPENDENCY_FLAGS = ("-MD", "-MMD", "-MP", "-MF", "-MT", "-MQ", "-Wp,-MMD", "-Wp,-MD")


def run(argv, cwd, flags):
    """Runs a build command of a style with stock clang-22 and CFLAGS=`flags`."""
    env = dict(os.environ, CC=CC, CFLAGS=flags)
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"{argv} in {cwd} failed:\n{r.stdout}{r.stderr}")
    return r


class BuildStyles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [name for name, path in (
            ("clang-22", CC), ("mlgo-env (MLGO_ENV)", MLGO_ENV),
            ("mlgo-env-launch (MLGO_ENV_LAUNCH)", MLGO_ENV_LAUNCH),
            ("cmake", shutil.which("cmake")), ("llvm-dis-22", shutil.which("llvm-dis-22")))
            if not path]
        if missing:
            raise AssertionError("this suite needs the real programs, missing: "
                                 + ", ".join(missing))
        cls.dir = tempfile.mkdtemp(prefix="mlgo-build-styles-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def copy(self, style, label):
        """A fresh copy of the projects; returns the style's directory in it."""
        root = os.path.join(self.dir, f"{style}-{label}")
        shutil.copytree(STYLES_DIR, root)
        return os.path.join(root, style)

    def capture(self, style, label="captured"):
        """corpus build of `style` at -Oz in a copy named `label`; returns (its directory,
        the corpus)."""
        command, base, modules, _ = STYLES[style]
        src = self.copy(style, label)
        corpus = os.path.join(self.dir, f"{style}-{label}-corpus")
        run([MLGO_ENV, "corpus", "build", f"--output_dir={corpus}", "--"] + command, src, "-Oz")
        with open(os.path.join(corpus, "corpus_description.json")) as f:
            self.assertEqual(set(json.load(f)["modules"]), modules)
        self.assertEqual(set(objects_under(os.path.join(src, base))), modules)
        return src, corpus

    def check_lookup(self, style, src, corpus):
        """Each module's compile, run alone, gives the build's object."""
        _, base, modules, _ = STYLES[style]
        if style == "response_file":
            self.assertFalse(os.path.exists(os.path.join(src, "main.o.rsp")))
        cmds = compile_commands(corpus)
        self.assertEqual(set(cmds), modules)
        for module, cmd in cmds.items():
            sources = [a for a in cmd.arguments if a.endswith(".c")]
            self.assertEqual(len(sources), 1, (module, cmd.arguments))
            self.assertFalse([a for a in cmd.arguments if a.startswith(DEPENDENCY_FLAGS)],
                             (module, cmd.arguments))
            out = os.path.join(self.dir, f"{style}-lookup", module)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run(cmd.arguments + ["-o", out], cwd=cmd.directory, check=True,
                           capture_output=True, timeout=120)
            built = os.path.join(src, base, module)
            self.assertEqual(text_bytes(out), text_bytes(built), module)
        if style == "libtool_twins":  # so the lookup could have mixed them up
            self.assertNotEqual(text_bytes(os.path.join(src, ".libs", "geom.o")),
                                text_bytes(os.path.join(src, "geom.o")))

    def check_replay(self, style, src, corpus):
        """Tune, write the replay file, build with it: the tuned objects where exact."""
        command, base, modules, program = STYLES[style]
        tuning = os.path.join(self.dir, style + "-tuning")
        said = []  # tune's lines and the replay writer's: the failures' context
        # The searches end when exhausted (3-6 s each here); the clock only bounds a
        # loaded machine.
        tune(TuneOptions("inlining", corpus, tuning, minutes=1.0, workers=2,
                         progress_every=0), said.append)
        entries = {e.module: e for e in read_entries(tuning)}
        summary = write_replay_file(tuning, corpus, MLGO_ENV_LAUNCH, 2, said.append)
        self.assertEqual((summary["modules"], summary["failed"]), (len(modules), 0), said)
        self.assertEqual(summary["reused"], 0, said)
        again = write_replay_file(tuning, corpus, MLGO_ENV_LAUNCH, 2, said.append)
        # the second run finds every module in the cache and writes the same file
        self.assertEqual((again["reused"], again["sha256"], again["exact"]),
                         (len(modules), summary["sha256"], summary["exact"]), said)
        self.assertGreater(summary["lines"], 0, said)
        with open(os.path.join(tuning, "inline-replay.json")) as f:
            report = {m["module"]: m for m in json.load(f)["modules"]}
        self.assertEqual(set(report), modules)
        with open(os.path.join(tuning, "inline-replay.flags")) as f:
            flags = f.read().strip()
        replayed = self.copy(style, "replay")
        run(command, replayed, "-Oz " + flags)
        smaller = 0
        cmds = compile_commands(corpus)
        for module in modules:
            got = text_bytes(os.path.join(replayed, base, module))
            expected = report[module]["replayed_bytes"]
            if expected is None:  # no line reaches it: the writer did not compile it again
                self.assertTrue(report[module]["untouched"] and module not in entries, module)
                own = os.path.join(self.dir, f"{style}-untouched", module)
                os.makedirs(os.path.dirname(own), exist_ok=True)
                subprocess.run(cmds[module].arguments + ["-gline-tables-only", "-o", own],
                               cwd=cmds[module].directory, check=True, capture_output=True,
                               timeout=120)
                expected = text_bytes(own)  # clang's own object, as the writer claims
            self.assertEqual(got, expected, (module, said))
            if report[module]["exact"] and module in entries:
                self.assertEqual(got, entries[module].tuned_score, (module, said))
                smaller += entries[module].tuned_score < entries[module].default_score
        self.assertGreater(smaller, 0, said)
        self.assertEqual(run([os.path.join(replayed, program)], replayed, "").stdout,
                         run([os.path.join(src, program)], src, "").stdout)

    def style_test(self, style):
        src, corpus = self.capture(style)
        self.check_lookup(style, src, corpus)
        self.check_replay(style, src, corpus)

    def test_the_replay_cache_sees_a_moved_line_and_not_a_trailing_comment(self):
        """The writer's cache key (replay_cache.source_digest) changes when a call's line
        moves, not when a comment is added after the code."""
        src, corpus = self.capture("no_o", "digest")
        module, cmd = sorted(compile_commands(corpus).items())[0]
        (source,) = [a for a in cmd.arguments if a.endswith(".c")]
        path = os.path.join(cmd.directory, source)
        with open(path) as f:
            text = f.read()
        scratch = tempfile.mkdtemp(dir=self.dir)
        before = source_digest(cmd, scratch)
        self.assertIsNotNone(before, module)
        self.assertEqual(source_digest(cmd, scratch), before)  # deterministic
        for edit, same in (("/* a comment after the code */\n", True), ("\n", False)):
            with open(path, "w") as f:
                f.write(text + edit if same else edit + text)
            self.assertEqual(source_digest(cmd, scratch) == before, same, (module, edit))
        with open(path, "w") as f:
            f.write(text)

    def test_no_o(self):
        self.style_test("no_o")

    def test_multi_source(self):
        self.style_test("multi_source")

    def test_response_file(self):
        self.style_test("response_file")

    def test_depfiles(self):
        self.style_test("depfiles")

    def test_obj_outside(self):
        self.style_test("obj_outside")

    def test_cmake_out_of_tree(self):
        self.style_test("cmake_out_of_tree")

    def test_libtool_twins(self):
        self.style_test("libtool_twins")


if __name__ == "__main__":
    unittest.main()
