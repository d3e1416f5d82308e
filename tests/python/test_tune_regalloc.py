"""`python -m mlgo_env.tune --problem=regalloc` and `mlgo-env-launch --tuning` in a real -O2
build (ctest, label clang).

tests/data/launch_project is captured at -O2, its eviction decisions tuned for a short while
with the real clang-22, then built by make through the launcher with the table and plainly:

- the modules with entries, and only they, are `tuned` in the launcher's log; each of their
  objects differs from the plain build's, and has exactly the executable bytes of a replay of
  the entry's actions that does not go through the launcher: the environment
  (mlgo_env.make) compiling the corpus's module with the entry's actions as the answers to
  clang's decisions, its object kept by a wrapper around clang-22; that replay scores the
  entry's tuned cost. The modules without entries get the plain build's object;
- the programs print the same;
- recorded evictions the mask refuses make each compile run again plainly, and say why.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG and MLGO_CLANGXX (ctest sets
them; real_tools.py): a missing one fails.
"""
import base64
import os
import shlex
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
import mlgo_env  # noqa: E402
from mlgo_env.elf import executable_sections  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.table import Entry, read_entries  # noqa: E402
from real_tools import needs  # noqa: E402
from test_launch import CC, MLGO_ENV_LAUNCH, ProjectCopies, objects_under  # noqa: E402
from test_tune import (build, corpus_of, log_lines, program_output, read_json,  # noqa: E402
                       write_json)

#: clang-22, keeping a copy of the object of each interactive compile in KEEP as <n>.o once
#: KEEP exists (made after the environment's probe, an interactive compile of its own)
KEEP_OBJECTS = """#!/bin/sh
{clang} "$@" || exit $?
[ -d {keep} ] || exit 0
case "$*" in *-interactive-channel-base=*) ;; *) exit 0 ;; esac
out=; previous=
for a in "$@"; do [ "$previous" = -o ] && out="$a"; previous="$a"; done
cp "$out" {keep}/$(ls {keep} | wc -l).o
"""


def replay(corpus: str, entry: Entry, scratch: str) -> tuple:
    """(executable sections of the object, cost) of `entry`'s module compiled by the
    environment with the entry's actions answering every decision: the launcher takes no part.
    Blocks for one compile (and its baseline); AssertionError when the replay does not use
    exactly the recorded actions or keeps no single object."""
    keep = os.path.join(scratch, "kept")
    wrapper = os.path.join(scratch, "clang-22")
    with open(wrapper, "w") as f:
        f.write(KEEP_OBJECTS.format(clang=shlex.quote(CC), keep=shlex.quote(keep)))
    os.chmod(wrapper, 0o755)
    env = mlgo_env.make("regalloc", corpus, clang=wrapper, jobs=1, disk_cache=False,
                        temp_dir=scratch)
    try:
        os.mkdir(keep)
        obs, info = env.reset(options={"module": entry.module, "actions": entry.actions})
    finally:
        env.close()
    assert obs is None, f"{entry.module}: the compile asked more than the recorded decisions"
    assert info["prefix_steps"] == len(entry.actions), (entry.module, info)
    kept = os.listdir(keep)
    assert len(kept) == 1, f"{entry.module}: kept {kept}"
    return executable_sections(os.path.join(keep, kept[0])), info["policy_score"]


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class TunedRegalloc(ProjectCopies):
    prefix = "mlgo-tune-ra-"

    def test_o2_build_with_a_regalloc_table(self):
        d = self.dir
        src = self.fresh("captured")
        corpus, tuning = os.path.join(d, "corpus"), os.path.join(d, "tuning")
        corpus_of(src, corpus, "-O2")
        tune(TuneOptions("regalloc", corpus, tuning, minutes=0.5, workers=2,
                         progress_every=0), lambda _: None)
        entries = {e.module: e for e in read_entries(tuning)}
        self.assertTrue(entries, "no module beat clang's own cost")
        built, plain = self.fresh("tuned"), self.fresh("plain")
        build(plain, flags="-O2")
        log = os.path.join(d, "log")
        build(built, [MLGO_ENV_LAUNCH, f"--tuning={tuning}", f"--log={log}"], "-O2")
        outcome = {r["output"]: r["outcome"] for r in log_lines(log)}
        self.assertEqual({m for m, o in outcome.items() if o == "tuned"}, set(entries))
        for module, path in objects_under(plain).items():
            ours = executable_sections(os.path.join(built, module))
            if module not in entries:  # clang's own decisions: the plain object
                self.assertEqual(ours, executable_sections(path), module)
                continue
            self.assertNotEqual(ours, executable_sections(path), module)
            scratch = os.path.join(d, "replay-" + module.replace("/", "_"))
            os.mkdir(scratch)
            replayed, cost = replay(corpus, entries[module], scratch)
            self.assertEqual(ours, replayed, module)
            self.assertEqual(cost, entries[module].tuned_score, module)
        for program in ("ctool", "cxxtool"):
            self.assertEqual(program_output(built, program), program_output(plain, program))
        self.check_refused_actions(tuning, set(entries), plain)

    def check_refused_actions(self, tuning, entries, plain):
        """Recorded evictions the mask refuses: each compile runs again plainly, says why."""
        refused = os.path.join(self.dir, "refused-table")
        shutil.copytree(tuning, refused)
        for name in os.listdir(os.path.join(refused, "modules")):
            path = os.path.join(refused, "modules", name)
            doc = read_json(path)
            for e in doc["entries"]:
                e["actions"] = base64.b64encode(bytes([99] * e["decisions"])).decode()
            write_json(path, doc)
        again = self.fresh("refused")
        log = os.path.join(self.dir, "refused.log")
        build(again, [MLGO_ENV_LAUNCH, f"--tuning={refused}", f"--log={log}"], "-O2")
        refusals = {r["output"] for r in log_lines(log)
                    if "the recorded decision 0 is refused" in r["why"]}
        self.assertEqual(refusals, entries)
        for module, path in objects_under(plain).items():
            self.assertEqual(executable_sections(os.path.join(again, module)),
                             executable_sections(path), module)


if __name__ == "__main__":
    unittest.main()
