"""Tuned builds with a profile (PGO) of the project's own workload (ctest, label clang).

tests/data/launch_project is built instrumented, its programs run, the profile merged with
llvm-profdata; the corpus is captured with the profile in CFLAGS, tuned for a short while with
the real clang-22, and built again through the launcher with the same profile:

- front-end profile (``-fprofile-instr-generate`` / ``-fprofile-instr-use=F``, relative),
  regalloc at -O2: the modules with entries, and only they, are `tuned`; each of their objects
  differs from the plain PGO build's and has exactly the executable bytes of a replay of its
  entry without the launcher; the others get the plain object. Then another run of the
  workload, merged into the same file: every compile falls back (`profile changed` in the
  launcher's log), every object is the plain build's with the new profile, and `tune status`
  names each module `profile changed`;
- IR-level profile (``-fprofile-generate`` / ``-fprofile-use=DIR``, read again by every
  recompile), inlining at -O2: each object has the executable bytes tune recorded; after
  another run merged into the same DIR, the build falls back to the plain objects, and a
  retune (no new capture needed) tunes the modules afresh, whose build again has exactly the
  recorded bytes.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG and MLGO_CLANGXX (ctest sets
them; real_tools.py), and llvm-profdata beside clang-22: a missing one fails.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
from mlgo_env.elf import executable_sections  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.status import status_lines  # noqa: E402
from mlgo_env.tuning.table import read_entries, read_manifest  # noqa: E402
from real_tools import needs  # noqa: E402
from test_launch import CC, MLGO_ENV_LAUNCH, PROJECT, objects_under, text_bytes  # noqa: E402
from test_tune import build, corpus_of, log_lines, program_output  # noqa: E402
from test_tune_regalloc import replay  # noqa: E402

PROGRAMS = ("ctool", "cxxtool")


def profdata() -> str:
    """llvm-profdata of the clang-22 the tests run; AssertionError when it is missing."""
    path = os.path.join(os.path.dirname(os.path.realpath(CC)), "llvm-profdata")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"no llvm-profdata beside {CC} ({path}): install llvm-22")
    return path


def profile_run(instrumented: str, out: str, raw: str, workload) -> str:
    """Runs `workload` (program names, in order) of the instrumented build, merges the raw
    profiles into `out` (replacing it) and returns its SHA-256."""
    os.makedirs(raw)
    for program in workload:
        subprocess.run([os.path.join(instrumented, program)], check=True, capture_output=True,
                       env={**os.environ, "LLVM_PROFILE_FILE": os.path.join(raw, "%p.profraw")})
    subprocess.run([profdata(), "merge", "-o", out] +
                   [os.path.join(raw, f) for f in sorted(os.listdir(raw))],
                   check=True, capture_output=True)
    with open(out, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ProfileProject:
    """A scratch directory with copies of the launch project and its instrumented build."""

    def __init__(self, prefix: str, generate: str) -> None:
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.instrumented = self.fresh("instrumented")
        build(self.instrumented, flags=f"-O2 {generate}")

    def fresh(self, name: str) -> str:
        path = os.path.join(self.dir, name)
        shutil.copytree(PROJECT, path)
        return path


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class FrontEndProfileRegalloc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = ProfileProject("mlgo-tune-pgo-", "-fprofile-instr-generate")
        d = cls.p.dir
        cls.profile = os.path.join(d, "pgo.profdata")
        cls.digest = profile_run(cls.p.instrumented, cls.profile, os.path.join(d, "raw1"),
                                 PROGRAMS)
        # relative, as a build gives it: each project copy is a sibling of the profile
        cls.flags = "-O2 -fprofile-instr-use=../pgo.profdata"
        cls.corpus, cls.tuning = os.path.join(d, "corpus"), os.path.join(d, "tuning")
        corpus_of(cls.p.fresh("captured"), cls.corpus, cls.flags)
        cls.said = []
        tune(TuneOptions("regalloc", cls.corpus, cls.tuning, minutes=0.5, workers=2,
                         progress_every=0), cls.said.append)
        cls.entries = {e.module: e for e in read_entries(cls.tuning)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.p.dir, ignore_errors=True)

    def launched(self, name, log):
        src = self.p.fresh(name)
        build(src, [MLGO_ENV_LAUNCH, f"--tuning={self.tuning}", f"--log={log}"], self.flags)
        return src

    def test_0_the_profile_orders_the_search(self):
        ordered = [x for x in self.said if x.startswith("tune: the search goes first")]
        self.assertEqual(len(ordered), 1, self.said)
        self.assertIn(os.path.realpath(self.profile), ordered[0])

    def test_1_the_same_profile_gets_the_tuned_objects(self):
        self.assertTrue(self.entries, "no module beat clang's own cost")
        self.assertEqual(read_manifest(self.tuning)["profiles"], [self.digest])
        self.assertEqual({e.profile for e in self.entries.values()}, {self.digest})
        plain = self.p.fresh("plain")
        build(plain, flags=self.flags)
        log = os.path.join(self.p.dir, "same.log")
        built = self.launched("tuned", log)
        outcome = {r["output"]: r["outcome"] for r in log_lines(log)}
        self.assertEqual({m for m, o in outcome.items() if o == "tuned"}, set(self.entries))
        for module, path in objects_under(plain).items():
            ours = executable_sections(os.path.join(built, module))
            if module not in self.entries:
                self.assertEqual(ours, executable_sections(path), module)
                continue
            self.assertNotEqual(ours, executable_sections(path), module)
            scratch = os.path.join(self.p.dir, "replay-" + module.replace("/", "_"))
            os.mkdir(scratch)
            replayed, cost = replay(self.corpus, self.entries[module], scratch)
            self.assertEqual(ours, replayed, module)
            self.assertEqual(cost, self.entries[module].tuned_score, module)
        for program in PROGRAMS:
            self.assertEqual(program_output(built, program), program_output(plain, program))

    def test_2_a_changed_profile_falls_back_and_status_names_the_modules(self):
        d = self.p.dir
        changed = profile_run(self.p.instrumented, self.profile, os.path.join(d, "raw2"),
                              ("ctool", "ctool", "ctool"))
        self.assertNotEqual(changed, self.digest)
        plain = self.p.fresh("plain-changed")
        build(plain, flags=self.flags)
        log = os.path.join(d, "changed.log")
        built = self.launched("tuned-changed", log)
        lines = log_lines(log)
        self.assertEqual(len(lines), len(objects_under(plain)))
        for r in lines:
            self.assertEqual(r["outcome"], "fallback", r)
            self.assertTrue(r["why"].startswith(
                f"profile changed: the table's modules were tuned with profile "
                f"{self.digest[:12]}, this compile reads '../pgo.profdata' (profile "
                f"{changed[:12]})"), r["why"])
        for module, path in objects_under(plain).items():
            self.assertEqual(executable_sections(os.path.join(built, module)),
                             executable_sections(path), module)
        status = list(status_lines(self.tuning, self.corpus, log))
        for module in read_json_modules(self.corpus):
            self.assertTrue(any(line.startswith(f"  profile changed: {module} (tuned with "
                                                f"profile {self.digest[:12]}")
                                for line in status), (module, status))


def read_json_modules(corpus):
    import json
    with open(os.path.join(corpus, "corpus_description.json")) as f:
        return json.load(f)["modules"]


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class IrProfileInlining(unittest.TestCase):
    def setUp(self):
        self.p = ProfileProject("mlgo-tune-irpgo-", "-fprofile-generate")

    def tearDown(self):
        shutil.rmtree(self.p.dir, ignore_errors=True)

    def check_tuned_build(self, tuning, flags, name):
        """The launched build's objects: each module with an entry has exactly its recorded
        executable bytes and is logged tuned; returns the entries."""
        entries = {e.module: e for e in read_entries(tuning)}
        self.assertTrue(entries)
        log = os.path.join(self.p.dir, name + ".log")
        built = self.p.fresh(name)
        build(built, [MLGO_ENV_LAUNCH, f"--tuning={tuning}", f"--log={log}"], flags)
        outcome = {r["output"]: r for r in log_lines(log)}
        for module, e in entries.items():
            self.assertEqual(outcome[module]["outcome"], "tuned", outcome[module])
            self.assertEqual(text_bytes(os.path.join(built, module)), e.tuned_score, module)
        return entries

    def test_an_ir_profile_read_by_every_recompile(self):
        d = self.p.dir
        pgo = os.path.join(d, "pgo")  # -fprofile-use=DIR reads DIR/default.profdata
        os.mkdir(pgo)
        profile = os.path.join(pgo, "default.profdata")
        first = profile_run(self.p.instrumented, profile, os.path.join(d, "raw1"), PROGRAMS)
        flags = f"-O2 -fprofile-use={pgo}"
        corpus, tuning = os.path.join(d, "corpus"), os.path.join(d, "tuning")
        corpus_of(self.p.fresh("captured"), corpus, flags)
        options = TuneOptions("inlining", corpus, tuning, minutes=0.4, workers=2,
                              progress_every=0)
        tune(options, lambda _: None)
        entries = self.check_tuned_build(tuning, flags, "tuned")
        self.assertEqual({e.profile for e in entries.values()}, {first})
        # another workload, merged into the same DIR: the build falls back, plainly
        second = profile_run(self.p.instrumented, profile, os.path.join(d, "raw2"),
                             ("cxxtool", "cxxtool"))
        self.assertNotEqual(second, first)
        plain = self.p.fresh("plain")
        build(plain, flags=flags)
        log = os.path.join(d, "changed.log")
        stale = self.p.fresh("changed")
        build(stale, [MLGO_ENV_LAUNCH, f"--tuning={tuning}", f"--log={log}"], flags)
        for r in log_lines(log):
            self.assertEqual(r["outcome"], "fallback", r)
            self.assertIn("profile changed", r["why"])
        for module, path in objects_under(plain).items():
            self.assertEqual(executable_sections(os.path.join(stale, module)),
                             executable_sections(path), module)
        # the recompiles read the new profile: a retune of the same corpus tunes afresh
        said = []
        tune(options, said.append)
        self.assertIn(f"{len(read_json_modules(corpus))} with another profile: afresh", said[0])
        again = self.check_tuned_build(tuning, flags, "retuned")
        self.assertEqual({e.profile for e in again.values()}, {second})


if __name__ == "__main__":
    unittest.main()
