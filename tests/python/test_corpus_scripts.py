"""The corpus scripts' refusals (run by ctest, label unit: no build, no network).

scripts/make_training_corpus.sh refuses the packages reserved for evaluation (lua5.4,
libzstd, bzip2, ninja-build, re2 and their aliases), with and without --thinlto;
scripts/make_eval_corpus.sh refuses every other package and the reserved packages of the
other kind (C without --thinlto, C++ with it); both refuse unknown options. A refusal
exits 2, names the package or option, and creates nothing. An OUT built for one purpose
(training, evaluation), ThinLTO mode or level is refused for another.

The scripts run with a PATH holding only the few tools they need before refusing (no
apt-get, dpkg-query, sudo, id, nproc), so a refusal that stopped working fails the test
instead of starting a build.
"""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
TRAINING = SCRIPTS / "make_training_corpus.sh"
EVALUATION = SCRIPTS / "make_eval_corpus.sh"
BASH = shutil.which("bash")


def run(script, *args, env=None):
    return subprocess.run([BASH, str(script), *args], capture_output=True, text=True,
                          timeout=60, env=dict(env or {}, PATH=CorpusScripts.bin))


class CorpusScripts(unittest.TestCase):
    bin = ""

    @classmethod
    def setUpClass(cls):
        cls.bin_dir = tempfile.TemporaryDirectory(prefix="mlgo-corpus-scripts-bin-")
        cls.bin = cls.bin_dir.name
        for tool in ("bash", "dirname", "mkdir", "cat"):
            os.symlink(shutil.which(tool), os.path.join(cls.bin, tool))

    @classmethod
    def tearDownClass(cls):
        cls.bin_dir.cleanup()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlgo-corpus-scripts-")
        self.out = pathlib.Path(self.tmp.name) / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def assertRefused(self, result, *words):
        self.assertEqual(result.returncode, 2, result.stderr + result.stdout)
        for word in words:
            self.assertIn(word, result.stderr)
        self.assertFalse(self.out.exists(), "a refused run created OUT")

    def test_training_refuses_every_reserved_package(self):
        for mode in ([], ["--thinlto"], ["--opt=-O2"]):
            for package in ("lua5.4", "lua5.3", "libzstd", "zstd", "bzip2", "libbz2-dev",
                            "ninja-build", "ninja", "re2", "libre2-9"):
                with self.subTest(mode=mode, package=package):
                    # Even after packages that would be accepted.
                    self.assertRefused(run(TRAINING, *mode, str(self.out), "zlib", package),
                                       f"'{package}' is reserved for evaluation")

    def test_evaluation_builds_only_the_reserved_packages_of_its_kind(self):
        cases = [([], "zlib"), ([], "yaml-cpp"), ([], "re2"), ([], "ninja-build"),
                 (["--thinlto"], "lua5.4"), (["--thinlto"], "bzip2"),
                 (["--thinlto"], "yaml-cpp"), (["--opt=-O2"], "lua"), ([], "libzstd-dev")]
        for mode, package in cases:
            with self.subTest(mode=mode, package=package):
                self.assertRefused(run(EVALUATION, *mode, str(self.out), package),
                                   f"'{package}' is not an evaluation package",
                                   "lua5.4 libzstd bzip2 (C), ninja-build re2 (C++, --thinlto)")

    def test_unknown_options_and_bad_names_are_refused(self):
        for script in (TRAINING, EVALUATION):
            for option in ("--opt=-O1", "--thin-lto", "--jobs=2"):
                with self.subTest(script=script.name, option=option):
                    self.assertRefused(run(script, option, str(self.out)),
                                       f"unknown option '{option}'")
            with self.subTest(script=script.name, usage=True):
                self.assertRefused(run(script, "--thinlto"), "usage:")
        self.assertRefused(run(TRAINING, str(self.out), "zlib;rm"), "not a Debian source package")

    def test_an_out_of_another_kind_is_refused(self):
        # MLGO_ENV only has to be executable: the check comes before any build.
        env = {"MLGO_ENV": "/bin/true"}
        work = self.out / ".work"
        work.mkdir(parents=True)
        (work / "opt").write_text("-Oz\n")  # an OUT made before kinds were recorded
        result = run(EVALUATION, str(self.out), env=env)
        self.assertEqual(result.returncode, 2, result.stderr + result.stdout)
        self.assertIn("holds a corpus for 'training embedded-bitcode -Oz', "
                      "not 'evaluation embedded-bitcode -Oz'", result.stderr)
        (work / "kind").write_text("evaluation thinlto -Oz\n")
        for script, args, wanted in ((TRAINING, ["--thinlto"], "training thinlto -Oz"),
                                     (EVALUATION, ["--opt=-O2", "--thinlto"],
                                      "evaluation thinlto -O2")):
            with self.subTest(wanted=wanted):
                result = run(script, *args, str(self.out), env=env)
                self.assertEqual(result.returncode, 2, result.stderr + result.stdout)
                self.assertIn(f"not '{wanted}'", result.stderr)
        self.assertEqual((work / "kind").read_text(), "evaluation thinlto -Oz\n")
        self.assertEqual(sorted(p.name for p in work.iterdir()), ["kind", "opt"])


if __name__ == "__main__":
    unittest.main()
