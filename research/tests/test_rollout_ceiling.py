"""research/rollout_ceiling.py (the per-module yardstick in docs/training-log.md) on the
-Oz demo corpus with the real clang-22: a pass keeps only changes that shrink a module."""

import os
import re
import subprocess
import sys

from research_paths import ROOT
from test_train import demo_corpus


def test_a_pass_never_makes_a_module_bigger(tmp_path):
    exe, corpus = demo_corpus()
    env = dict(os.environ, MLGO_ENV=exe,
               PYTHONPATH=os.pathsep.join([str(ROOT / "python"),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "research" / "rollout_ceiling.py"),
         f"--corpus={corpus}", "--modules=4", "--max-decisions=40", "--passes=2",
         f"--cache-dir={tmp_path}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout
    head = re.search(r"^(\d+) training modules with 1-40 decisions \((\d+) in all\)",
                     proc.stdout, re.M)
    assert head, proc.stdout
    modules, decisions = int(head.group(1)), int(head.group(2))
    assert 1 <= modules <= 4
    passes = re.findall(r"^pass (\d): (\d+) episodes; (\d+) -> (\d+) bytes .*?"
                        r"mean per-module reward ([-+][\d.]+)", proc.stdout, re.M)
    assert [p[0] for p in passes] == ["1", "2"], proc.stdout
    previous = None
    for _, episodes, default, after, mean in passes:
        # One episode per decision of the current trajectories (which kept changes may
        # lengthen or shorten), never a bigger total nor a negative mean reward.
        assert int(episodes) >= modules
        assert int(after) <= int(default)
        assert float(mean) >= 0.0
        if previous is not None:
            assert int(after) <= previous, "a second pass undid a saving"
        previous = int(after)
    assert decisions >= modules
