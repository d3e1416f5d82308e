"""`mlgo-env launch` inside real builds (run by ctest, label clang).

The project under tests/data/launch_project (C and C++, two programs) is built by make
and by CMake, plainly and through the launcher, with the real clang-22:

- a policy equal to clang's default (the anchored margin policy at zero shift; a flip
  classifier whose logit is always negative) gives every object the plain build's
  executable bytes, byte for byte, and the programs (links pass through) print the same;
- a shifted policy gives each object exactly the executable bytes the in-process
  environment reports when the same policy plays the module extracted from that build
  (objects built with -Xclang -fembed-bitcode=all, `mlgo-env corpus extract`);
- a corrupt policy fails the first compile with a message naming the file and the source;
  a policy that misses a feature fails it naming the feature; a compiler stopped past
  --compile-timeout is killed; the compiler's own errors reach the build unchanged;
- SIGINT to the build (as Ctrl-C sends it) leaves no clang and no fifo behind.

make runs the lean launcher (mlgo-env-launch, MLGO_ENV_LAUNCH; linked statically), CMake
`mlgo-env launch`.
Needs MLGO_ENV (the mlgo-env executable), MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR (the Python
core), MLGO_CLANG and MLGO_CLANGXX (ctest sets them; real_tools.py): a missing one fails.
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
import numpy as np  # noqa: E402

import mlgo_env  # noqa: E402
from mlgo_env.elf import executable_sections  # noqa: E402,F401 - also bench/'s
from mlgo_env.policies.policy import Layer, Policy, save_policy  # noqa: E402
from real_tools import needs, path_of  # noqa: E402

MLGO_ENV = path_of("MLGO_ENV")
MLGO_ENV_LAUNCH = path_of("MLGO_ENV_LAUNCH")
PROJECT = os.path.join(CHECKOUT, "tests", "data", "launch_project")
CC, CXX = path_of("MLGO_CLANG"), path_of("MLGO_CLANGXX")


class ProjectCopies(unittest.TestCase):
    """A test case with a scratch directory (removed after it) and fresh copies of the
    launch project in it."""
    prefix = "mlgo-project-"

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix=self.prefix)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def fresh(self, name):
        path = os.path.join(self.dir, name)
        shutil.copytree(PROJECT, path)
        return path


def text_bytes(path):
    return sum(len(b) for _, b in executable_sections(path))


def objects_under(root):
    found = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".o"):
                path = os.path.join(dirpath, name)
                found[os.path.relpath(path, root)] = path
    return found


def processes_naming(text):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and text.encode() in cmdline:
            found.append(int(pid))
    return found


MARGIN_FEATURES = ["threshold", "cost_estimate", "inlining_default"]


def margin_policy(shift):
    """The anchored margin policy (mlgo_env.policies.margin_policy) moved by `shift` cost units."""
    return Policy("inlining", list(MARGIN_FEATURES), np.zeros(3), np.ones(3),
                  [Layer(np.array([[1.0], [0.0], [0.0], [0.0]]), np.array([float(shift)]),
                         "linear")],
                  transforms=["identity"] * 3,
                  margin={"plus": "threshold", "floor": 1.0, "minus": "cost_estimate",
                          "anchor": "inlining_default", "epsilon": 0.5})


def never_flip_policy():
    """A flip classifier whose logit is far below 0 everywhere: exactly the default."""
    features = ["callee_users", "cost_estimate", "inlining_default"]
    return Policy("inlining", features, np.zeros(3), np.ones(3),
                  [Layer(np.array([[0.01], [0.01], [0.0]]), np.array([-1e6]), "linear")],
                  transforms=["signed-log1p"] * 3, decision="flip-default-if-logit>0")


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class Launch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mlgo-launch-test-")
        self.scratch = os.path.join(self.dir, "tmp")  # the launcher's TMPDIR: fifos live here
        os.mkdir(self.scratch)
        self.env = dict(os.environ, TMPDIR=self.scratch)

    def tearDown(self):
        for pid in processes_naming(self.scratch):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------
    def policy_file(self, policy, name):
        path = os.path.join(self.dir, name)
        save_policy(policy, path)
        return path

    def launcher(self, policy_path, compiler, *extra):
        return [MLGO_ENV_LAUNCH, f"--policy={policy_path}", *extra, "--", compiler]

    def project(self, name):
        path = os.path.join(self.dir, name)
        shutil.copytree(PROJECT, path)
        return path

    def make(self, name, policy_path=None, flags="-O2", check=True):
        src = self.project(name)
        cc, cxx = CC, CXX
        if policy_path:
            cc = " ".join(self.launcher(policy_path, CC))
            cxx = " ".join(self.launcher(policy_path, CXX))
        run = subprocess.run(["make", "-j2", f"CC={cc}", f"CXX={cxx}", f"CFLAGS={flags}",
                              f"CXXFLAGS={flags}"], cwd=src, env=self.env,
                             capture_output=True, text=True, timeout=600)
        if check:
            self.assertEqual(run.returncode, 0, run.stderr)
        return src, run

    def cmake(self, name, policy_path=None, flags="-Oz"):
        src = self.project(name)
        build = os.path.join(src, "b")
        args = ["cmake", "-S", src, "-B", build, "-G", "Unix Makefiles",
                f"-DCMAKE_C_COMPILER={CC}", f"-DCMAKE_CXX_COMPILER={CXX}",
                f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}"]
        if policy_path:
            launcher = ";".join([MLGO_ENV, "launch", f"--policy={policy_path}", "--"])
            args += [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}",
                     f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}"]
        for cmd in (args, ["cmake", "--build", build, "-j2"]):
            run = subprocess.run(cmd, cwd=src, env=self.env, capture_output=True, text=True,
                                 timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        return build

    def output_of(self, program):
        return subprocess.run([program], capture_output=True, text=True, check=True).stdout

    def assert_nothing_left(self):
        self.assertEqual(processes_naming(self.scratch), [])
        self.assertEqual(os.listdir(self.scratch), [])

    def assert_same_code(self, plain_root, launched_root):
        plain, launched = objects_under(plain_root), objects_under(launched_root)
        self.assertEqual(sorted(plain), sorted(launched))
        self.assertGreaterEqual(len(plain), 5)
        for name in plain:
            self.assertEqual(executable_sections(plain[name]),
                             executable_sections(launched[name]), name)

    # -- tests --------------------------------------------------------------------------
    def test_default_policies_give_the_plain_build_byte_for_byte(self):
        plain, _ = self.make("plain")
        launched, run = self.make("launched", self.policy_file(margin_policy(0.0), "zero.json"))
        self.assert_same_code(plain, launched)
        for program in ("ctool", "cxxtool"):
            self.assertEqual(self.output_of(os.path.join(plain, program)),
                             self.output_of(os.path.join(launched, program)))
        # CMake, -Oz, the other default-equivalent form.
        plain_b = self.cmake("plain-cmake")
        launched_b = self.cmake("launched-cmake", self.policy_file(never_flip_policy(), "nf.json"))
        self.assert_same_code(plain_b, launched_b)
        self.assertEqual(self.output_of(os.path.join(plain_b, "cxxtool")),
                         self.output_of(os.path.join(launched_b, "cxxtool")))
        self.assert_nothing_left()

    def test_shifted_policy_builds_what_the_environment_predicts(self):
        policy = margin_policy(40.0)
        path = self.policy_file(policy, "shift.json")
        flags = "-Oz -Xclang -fembed-bitcode=all"
        plain, _ = self.make("plain", flags=flags)
        launched, _ = self.make("launched", path, flags=flags)
        objects = objects_under(launched)
        changed = [n for n, p in objects_under(plain).items()
                   if executable_sections(p) != executable_sections(objects[n])]
        self.assertTrue(changed, "the shifted policy changed no object: the test proves nothing")
        corpus = os.path.join(self.dir, "corpus")
        subprocess.run([MLGO_ENV, "corpus", "extract", f"--input={launched}",
                        "--input_type=directory", f"--output_dir={corpus}"],
                       check=True, capture_output=True, env=self.env, timeout=300)
        with open(os.path.join(corpus, "corpus_description.json")) as f:
            modules = json.load(f)["modules"]
        self.assertEqual(sorted(modules), sorted(objects))
        env = mlgo_env.make("inlining", corpus=corpus, jobs=2,
                            cache_dir=os.path.join(self.dir, "cache"))
        try:
            for module in modules:
                obs, info = env.reset(options={"module": module})
                while obs is not None:
                    obs, _, _, _, info = env.step(policy.act(obs, info))
                self.assertEqual(info["policy_score"], text_bytes(objects[module]), module)
        finally:
            env.close()
        # The policy's build still computes the same (links pass through).
        for program in ("ctool", "cxxtool"):
            self.assertEqual(self.output_of(os.path.join(plain, program)),
                             self.output_of(os.path.join(launched, program)))

    def test_corrupt_policy_fails_the_first_compile(self):
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write('{"format": "mlgo-env-policy", "version": 2,')
        src, run = self.make("bad", bad, check=False)
        self.assertNotEqual(run.returncode, 0)
        self.assertRegex(run.stderr, r"mlgo-env launch: src/\w+\.(c|cpp): policy '" + bad +
                         "' is not valid JSON")
        self.assertEqual(list(objects_under(src)), [])
        # A link with the same launcher passes through without reading the policy.
        plain, _ = self.make("plain")
        objs = [os.path.join(plain, "src", n) for n in ("text.o", "table.o", "matrix.o",
                                                          "ctool.o")]
        out = os.path.join(self.dir, "relinked")
        subprocess.run(self.launcher(bad, CC) + [*objs, "-o", out, "-lm"], check=True,
                       env=self.env, timeout=120)
        self.assertEqual(self.output_of(out), self.output_of(os.path.join(plain, "ctool")))
        self.assert_nothing_left()

    def test_policy_missing_a_feature_fails_naming_it(self):
        policy = margin_policy(0.0)
        policy.features[0] = "no_such_feature"
        policy.margin["plus"] = "no_such_feature"
        path = self.policy_file(policy, "missing.json")
        source = os.path.join(PROJECT, "src", "text.c")
        run = subprocess.run(self.launcher(path, CC) + ["-O2", "-c", source, "-o",
                                                        os.path.join(self.dir, "t.o")],
                             capture_output=True, text=True, env=self.env, timeout=120)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"mlgo-env launch: {source}: policy '{path}': the observation has no "
                      "feature 'no_such_feature'", run.stderr)
        self.assert_nothing_left()

    def test_compiler_errors_reach_the_build_unchanged(self):
        broken = os.path.join(self.dir, "broken.c")
        with open(broken, "w") as f:
            f.write("int f(void) { return undeclared; }\n")
        path = self.policy_file(margin_policy(0.0), "zero.json")
        cmd = ["-O2", "-c", broken, "-o", os.path.join(self.dir, "broken.o")]
        plain = subprocess.run([CC, *cmd], capture_output=True, text=True)
        launched = subprocess.run(self.launcher(path, CC) + cmd, capture_output=True, text=True,
                                  env=self.env, timeout=120)
        self.assertEqual(launched.returncode, plain.returncode)
        self.assertNotEqual(plain.returncode, 0)
        self.assertEqual(launched.stderr, plain.stderr)
        self.assertEqual(launched.stdout, plain.stdout)
        self.assert_nothing_left()

    def test_stopped_compiler_is_killed_at_the_timeout(self):
        path = self.policy_file(margin_policy(0.0), "zero.json")
        source = os.path.join(PROJECT, "src", "table.c")
        proc = subprocess.Popen(self.launcher(path, CC, "--compile-timeout=2") +
                                ["-O2", "-c", source, "-o", os.path.join(self.dir, "t.o")],
                                stderr=subprocess.PIPE, text=True, env=self.env)
        # Stop the compiler as soon as it runs: it never answers.
        deadline = time.time() + 60
        stopped = False
        while time.time() < deadline and not stopped:
            for pid in processes_naming(self.scratch):
                os.kill(pid, signal.SIGSTOP)
                stopped = True
        self.assertTrue(stopped)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"mlgo-env launch: {source}: ", err)
        self.assertIn("compile timeout of 2000 ms", err)
        self.assert_nothing_left()

    def test_lean_launcher_does_not_load_libllvm(self):
        """mlgo-env-launch starts without libLLVM.so (loading both copies of LLVM's
        options would abort), and without any shared library: it is linked statically
        (src/CMakeLists.txt); `mlgo-env launch` is the same launcher."""
        readelf = shutil.which("llvm-readelf-22") or shutil.which("readelf")
        headers = subprocess.run([readelf, "-l", "-d", MLGO_ENV_LAUNCH], capture_output=True,
                                 text=True, check=True).stdout
        self.assertIn("LOAD", headers)  # so the program headers were read
        self.assertNotIn("INTERP", headers)  # no dynamic loader
        self.assertNotIn("NEEDED", headers)
        self.assertNotIn("libLLVM", headers)
        for program in ([MLGO_ENV_LAUNCH], [MLGO_ENV, "launch"]):
            run = subprocess.run(program + ["--policy=unused.json", "--explain", "--", CC,
                                            "--version"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("clang version 22", run.stdout)
            self.assertIn("passes through: --version", run.stderr)

    def test_sigint_leaves_no_clang_and_no_fifo(self):
        src = self.project("interrupted")
        # Slow compiles with many inlining decisions, so the signal lands mid-compile.
        for i in range(2):
            with open(os.path.join(src, "src", f"big{i}.c"), "w") as f:
                f.write("".join(f"static int f{j}(int x) {{ return x * {j % 7 + 2} + f{j - 1}(x"
                                f" ^ {j}); }}\n" if j else "static int f0(int x) { return x; }\n"
                                for j in range(500)))
                f.write("int run(int x) { return f499(x); }\n")
        launcher = " ".join(self.launcher(self.policy_file(margin_policy(0.0), "zero.json"), CC))
        make = subprocess.Popen(["make", "-j2", f"CC={launcher}", "src/big0.o", "src/big1.o"],
                                cwd=src, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline and not processes_naming("interactive-channel-base=" +
                                                               self.scratch):
            time.sleep(0.01)
        time.sleep(0.2)
        self.assertIsNone(make.poll(), "the build ended before it could be interrupted")
        os.killpg(make.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        _, err = make.communicate(timeout=60)
        self.assertNotEqual(make.returncode, 0)
        self.assertIn("mlgo-env launch: interrupted (SIGINT)", err)
        time.sleep(0.2)
        self.assert_nothing_left()


if __name__ == "__main__":
    unittest.main()
