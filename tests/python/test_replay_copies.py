"""The inline-replay file where one call site has several inlined copies (ctest, label clang).

tests/data/replay_copies is captured with `mlgo-env corpus build -- make` at -Oz. Its tables
are not searched: each is one record episode whose answers are clang's own except at a few
steps, chosen so that the tuned compile has

- **mixed copies**: copies of one call site (one innermost location, several inlined-at
  chains) answered "yes" and "no";
- **a merged "no"**: two copies of a read-only call answered "no", merged into one by later
  passes, so the final IR has one call for two departing decisions.

Each case checks its shape first (in the tuned compile's record and final IR), so a clang
that decides in another order fails here instead of testing nothing. Then the replay writer
must call the module exact, and a make build with stock clang-22 and the file must give
copies.o exactly the executable bytes of the launcher's build with the table, and the same
program output as the plain build.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR and MLGO_CLANG like test_tune.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(CHECKOUT, "python"))
from real_tools import needs  # noqa: E402
from test_launch import CC, MLGO_ENV, MLGO_ENV_LAUNCH, text_bytes  # noqa: E402

import mlgo_env  # noqa: E402
from mlgo_env.episodes import play_episode  # noqa: E402
from mlgo_env.tuning import ir_sites  # noqa: E402
from mlgo_env.tuning.identity import clang_identity, identity_features  # noqa: E402
from mlgo_env.tuning.inline_replay import write_replay_file  # noqa: E402
from mlgo_env.tuning.record import Recorder  # noqa: E402
from mlgo_env.tuning.replay_lines import Compiler, compile_commands  # noqa: E402
from mlgo_env.tuning.table import Entry, write_table  # noqa: E402

PROJECT = os.path.join(CHECKOUT, "tests", "data", "replay_copies")
MODULE = "copies.o"
#: the steps (in clang-22's order of decisions) answered against clang's advice
MIXED, MERGED = {2, 4, 8}, {4, 7, 8, 9}


def make(src, cc, flags="-Oz"):
    subprocess.run(["make", f"CC={cc}", f"CFLAGS={flags}"], cwd=src, check=True,
                   capture_output=True, text=True, timeout=600)
    out = subprocess.run([os.path.join(src, "prog")], check=True, capture_output=True,
                         text=True).stdout
    return text_bytes(os.path.join(src, MODULE)), out


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG")
class ReplayCopies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlgo-replay-copies-")
        try:
            src = cls.fresh("captured")
            cls.corpus = os.path.join(cls.dir, "corpus")
            subprocess.run([MLGO_ENV, "corpus", "build", f"--output_dir={cls.corpus}", "--",
                            "make", "CFLAGS=-Oz"], cwd=src, check=True,
                           capture_output=True, timeout=600)
            cls.plain = make(cls.fresh("plain"), CC)
        except BaseException:  # tearDownClass does not run after a failed setUpClass
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def fresh(cls, name):
        path = os.path.join(cls.dir, name)
        shutil.copytree(PROJECT, path)
        return path

    def table(self, name, flipped):
        """A tuning directory whose one entry answers clang's advice except at `flipped`."""
        tuning = os.path.join(self.dir, name)
        env = mlgo_env.make("inlining", corpus=self.corpus, jobs=1)
        try:
            obs, _ = env.reset(options={"module": MODULE})
            features = identity_features(sorted(obs))
            steps = iter(range(1 << 20))

            def decide(_, info):
                default = int(info["default_action"])
                return 1 - default if next(steps) in flipped else default

            rec = Recorder(decide, features, sites=True)
            res = play_episode(env, MODULE, rec)
        finally:
            env.close()
        self.assertNotEqual(res.policy_score, res.default_score)
        write_table(tuning, "inlining", features, clang_identity(CC), [Entry(
            MODULE, rec.actions, rec.hash.first, rec.hash.hexdigest(), res.default_score,
            res.policy_score, "-Oz", "", b"".join(rec.sites))])
        return tuning

    def tuned_compile(self, tuning):
        """The tuned compile's decisions and the calls of its final IR."""
        scratch = os.path.join(tuning, "scratch")
        os.makedirs(scratch)
        c = Compiler(compile_commands(self.corpus)[MODULE], MLGO_ENV_LAUNCH, tuning, scratch,
                     MODULE)
        record = os.path.join(scratch, "tuned.yaml")
        ir = c.ir(["-fsave-optimization-record", f"-foptimization-record-file={record}",
                   "-foptimization-record-passes=inline-ml"], "tuned", tuned=True)
        with open(record) as f:
            decisions = ir_sites.parse_records(f.read())
        return decisions, ir_sites.parse_calls(ir)

    def assert_replay_builds_the_tuned_object(self, tuning):
        said = []
        summary = write_replay_file(tuning, self.corpus, MLGO_ENV_LAUNCH, 2, said.append)
        self.assertEqual(summary["exact"], summary["modules"], said)
        tuned = make(self.fresh(os.path.basename(tuning) + "-launcher"),
                     f"{MLGO_ENV_LAUNCH} --tuning={tuning} -- {CC}")
        with open(os.path.join(tuning, "inline-replay.flags")) as f:
            flags = f.read().strip()
        replayed = make(self.fresh(os.path.basename(tuning) + "-replay"), CC, f"-Oz {flags}")
        self.assertNotEqual(tuned[0], self.plain[0], "the table changed nothing")
        self.assertEqual(replayed[0], tuned[0])
        self.assertEqual(replayed[1], self.plain[1])

    def test_copies_of_one_site_answered_both_ways(self):
        tuning = self.table("mixed", MIXED)
        decisions, _ = self.tuned_compile(tuning)
        answers = {}
        for d in decisions:
            answers.setdefault(d.site, []).append(d)
        mixed = [s for s, ds in answers.items() if len({d.inline for d in ds}) > 1
                 and any(d.inline != d.default for d in ds)]
        self.assertTrue(mixed, f"no site of the tuned compile has copies answered both ways "
                               f"({[(d.caller, d.callee, d.inline) for d in decisions]})")
        self.assert_replay_builds_the_tuned_object(tuning)

    def test_a_no_merged_away_by_later_passes(self):
        tuning = self.table("merged", MERGED)
        decisions, calls = self.tuned_compile(tuning)
        left = {}
        for c in calls:
            left[c.site] = left.get(c.site, 0) + 1
        noes = {}
        for d in decisions:
            if not d.inline and d.default:
                noes[d.site] = noes.get(d.site, 0) + 1
        merged = [s for s, n in noes.items() if left.get(s, 0) < n]
        self.assertTrue(merged, f"every departing 'no' of the tuned compile left its call "
                                f"({noes}, {left})")
        self.assert_replay_builds_the_tuned_object(tuning)


if __name__ == "__main__":
    unittest.main()
