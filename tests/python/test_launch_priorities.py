"""`mlgo-env-launch --tuning` with an entry that has register priorities (ctest, label
clang): the launcher opens clang-22's priority channel beside the eviction channel and
answers both from the table.

tests/data/launch_project is captured at -O2. Its module with the most eviction questions
is compiled by the environment under fixed priorities (the `weight` fallback times a
multiplier per function and question, as tune's joint search answers them) with its
evictions answered by the environment's own default and recorded as a table entry with
those priorities; then the project is built by make through the launcher with that table:

- that module, and only it, is `tuned`, its log line counting the priority questions
  answered; its object has exactly the executable bytes of the environment's compile, and
  differs from the plain build's; every other object is the plain build's;
- the programs print the same;
- an entry whose recorded priority questions are one too many, or one too few (the compile
  is stopped at the extra question), departs: the compile runs again plainly (the plain
  build's object) and the log says why;
- an entry the object path does not name (its module renamed in the table) does not apply:
  its evictions were recorded under its priorities; the compile runs again plainly and the
  log says why.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG and MLGO_CLANGXX (ctest sets
them; real_tools.py): a missing one fails.
"""
import json
import os
import shlex
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
import mlgo_env  # noqa: E402
from mlgo_env import episodes as ep  # noqa: E402
from mlgo_env.elf import executable_sections  # noqa: E402
from mlgo_env.tuning.identity import clang_identity, identity_features  # noqa: E402
from mlgo_env.tuning.record import Recorder  # noqa: E402
from mlgo_env.tuning.table import Entry, write_table  # noqa: E402
from real_tools import needs  # noqa: E402
from test_launch import CC, MLGO_ENV_LAUNCH, ProjectCopies, objects_under  # noqa: E402
from test_tune import build, corpus_of, log_lines, program_output  # noqa: E402
from test_tune_regalloc import KEEP_OBJECTS  # noqa: E402

#: what each function's first and third priority questions are multiplied by
MULTIPLIERS = {"0": 16.0, "2": 0.0625}


def busiest_module(corpus: str) -> tuple[str, list[str]]:
    """The module with the most eviction questions under clang's own priorities, and its
    functions' names."""
    env = mlgo_env.make("regalloc", corpus, jobs=1, disk_cache=False)
    try:
        played = [ep.play_episode(env, m, ep.default_decider) for m in ep.corpus_modules(corpus)]
    finally:
        env.close()
    best = max(played, key=lambda r: r.steps)
    assert best.steps > 0, "no module of the project asks an eviction question"
    return best.module, [c["name"] for c in best.contexts]


def joint_entry(corpus: str, module: str, functions: list[str], scratch: str
                ) -> tuple[Entry, list[str], dict]:
    """The entry of `module` compiled under fixed priorities with the environment's default
    evictions, the table's identity features, and the executable sections of that
    compile's object."""
    priorities = os.path.join(scratch, "priorities.json")
    with open(priorities, "w") as f:
        json.dump({"modules": [{"module": module, "functions": {
            name: {"multipliers": MULTIPLIERS} for name in functions}}]}, f)
    keep, wrapper = os.path.join(scratch, "kept"), os.path.join(scratch, "clang-22")
    with open(wrapper, "w") as f:
        f.write(KEEP_OBJECTS.format(clang=shlex.quote(CC), keep=shlex.quote(keep)))
    os.chmod(wrapper, 0o755)
    env = mlgo_env.make("regalloc", corpus, clang=wrapper, jobs=1, disk_cache=False,
                        temp_dir=scratch, fixed_priorities=priorities)
    try:
        space = env.observation_space
        features = identity_features(list(getattr(space, "spaces", space).keys()))
        rec = Recorder(ep.default_decider, features)
        os.mkdir(keep)
        obs, info = env.reset(options={"module": module})
        while obs is not None:
            obs, _, term, trunc, info = env.step(rec(obs, info))
            if term or trunc:
                break
    finally:
        env.close()
    assert info["priority_answers"] > 0, info
    kept = os.listdir(keep)
    assert len(kept) == 1, kept
    entry = Entry(module, rec.actions, rec.hash.first, rec.hash.hexdigest(),
                  float(info["default_score"]), float(info["policy_score"]), "-O2",
                  priorities={"questions": info["priority_answers"],
                              "functions": {name: MULTIPLIERS for name in functions}})
    return entry, features, executable_sections(os.path.join(keep, kept[0]))


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class LaunchPriorities(ProjectCopies):
    prefix = "mlgo-launch-prio-"

    def launch(self, name, entry, features):
        tuning = os.path.join(self.dir, name + "-table")
        write_table(tuning, "regalloc", features, clang_identity(CC), [entry])
        built, log = self.fresh(name), os.path.join(self.dir, name + ".log")
        build(built, [MLGO_ENV_LAUNCH, f"--tuning={tuning}", f"--log={log}"], "-O2")
        return built, {r["output"]: r for r in log_lines(log)}

    def test_the_launcher_answers_priorities_and_evictions_from_the_table(self):
        corpus = os.path.join(self.dir, "corpus")
        corpus_of(self.fresh("captured"), corpus, "-O2")
        module, functions = busiest_module(corpus)
        scratch = os.path.join(self.dir, "scratch")
        os.mkdir(scratch)
        entry, features, compiled = joint_entry(corpus, module, functions, scratch)
        plain = self.fresh("plain")
        build(plain, flags="-O2")
        built, lines = self.launch("joint", entry, features)
        self.assertEqual(lines[module]["outcome"], "tuned", lines[module])
        self.assertEqual(lines[module]["priorities"], entry.priorities["questions"])
        self.assertEqual({m for m, r in lines.items() if r["outcome"] == "tuned"}, {module})
        for name, path in objects_under(plain).items():
            ours = executable_sections(os.path.join(built, name))
            if name == module:
                self.assertEqual(ours, compiled, name)  # what the environment compiled
                self.assertNotEqual(ours, executable_sections(path), name)
            else:
                self.assertEqual(ours, executable_sections(path), name)
        for program in ("ctool", "cxxtool"):
            self.assertEqual(program_output(built, program), program_output(plain, program))

        asked = entry.priorities["questions"]
        for name, recorded, why in [
                ("fewer", asked + 1, f"{asked} priority questions, {asked + 1} recorded"),
                ("more", asked - 1, f"more priority questions than the {asked - 1} recorded")]:
            entry.priorities["questions"] = recorded
            again, lines = self.launch(name, entry, features)
            self.assertEqual(lines[module]["outcome"], "fallback", lines[module])
            self.assertIn(f"departs from its tuned decisions: {why}", lines[module]["why"])
            self.assert_plain(again, plain)
        entry.priorities["questions"] = asked
        entry.module = "elsewhere/" + os.path.basename(module) + ".other.o"
        again, lines = self.launch("unnamed", entry, features)
        self.assertEqual(lines[module]["outcome"], "fallback", lines[module])
        # without the priority channel clang's own priorities ask another first eviction,
        # or, where the first is the same, the entry is refused for want of its priorities
        self.assertTrue(lines[module]["why"].startswith("no tuned module makes this first") or
                        f"module '{entry.module}' was tuned with register priorities, and the "
                        f"object path '{module}' did not name it" in lines[module]["why"],
                        lines[module])
        self.assert_plain(again, plain)

    def assert_plain(self, built, plain):
        for name, path in objects_under(plain).items():
            self.assertEqual(executable_sections(os.path.join(built, name)),
                             executable_sections(path), name)


if __name__ == "__main__":
    unittest.main()
