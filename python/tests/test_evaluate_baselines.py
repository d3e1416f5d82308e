"""python -m mlgo_env.evaluate's baselines (the default, constant shifts, no optional
inline) with the real clang-22 on a few modules of the -Oz demo corpus, and the
baseline policies themselves."""

import json
import os
import re

import numpy as np
import pytest

from mlgo_env.policies.policy import save_policy
from mlgo_env.tuning.baselines import no_inline_policy, parse_shifts, shift_policy

from test_train import demo_corpus, run_module

TOTAL = re.compile(r"^total: default (\d+) bytes, policy (\d+) bytes, change [+-]\d+\.\d\d%$")
BASELINE = re.compile(r"^  (.+?)\s+total (\d+) bytes, change ([+-]\d+\.\d\d)%, mean per-module "
                      r"reward ([+-]\d\.\d{5})(  <- best constant shift \(chosen on these "
                      r"modules: an optimistic baseline\))?$")


def rows(threshold, cost, default):
    return np.array([[t, c, d] for t, c, d in zip(threshold, cost, default)], dtype=float)


def test_baseline_policies_decide_as_documented():
    # features: threshold, cost_estimate, inlining_default
    r = rows([45, 45, 45, 45, 0], [10, 50, 80, 20, 3], [1, 0, 0, 1, 0])
    assert shift_policy("inlining", 0.0).decisions(r).tolist() == [1, 0, 0, 1, 0]
    # +10 inlines the refused calls whose margin is above -10 (45 - 50 = -5; max(0, 1) - 3
    # = -2), not the one at -35.
    assert shift_policy("inlining", 10.0).decisions(r).tolist() == [1, 1, 0, 1, 1]
    # -30 refuses the inlined call whose margin is below 30 (45 - 20 = 25).
    assert shift_policy("inlining", -30.0).decisions(r).tolist() == [1, 0, 0, 0, 0]
    assert no_inline_policy("inlining").decisions(r).tolist() == [0, 0, 0, 0, 0]
    assert parse_shifts("-40, 20,+5") == [-40.0, 20.0, 5.0]
    for bad in ("x", "0", "nan"):
        with pytest.raises(ValueError):
            parse_shifts(bad)


def test_evaluate_prints_the_baselines_before_the_totals(tmp_path):
    _, corpus = demo_corpus()
    modules = json.load(open(os.path.join(corpus, "corpus_description.json")))["modules"][:3]
    policy = tmp_path / "shift20.json"
    save_policy(shift_policy("inlining", 20.0), policy)
    common = ["mlgo_env.evaluate", "--problem=inlining", f"--policy={policy}",
              f"--corpus={corpus}", "--workers=2", f"--cache-dir={tmp_path / 'cache'}",
              f"--modules={','.join(modules)}"]
    proc = run_module(*common, "--baseline-shifts=-20,20")
    lines = proc.stdout.strip().splitlines()
    total = TOTAL.match(lines[-1])
    assert total, lines[-1]
    assert lines[-2].startswith("mean per-module reward: ") and "over 3 modules" in lines[-2]
    start = lines.index("baselines on the same modules:")
    found = {m.group(1): m for m in map(BASELINE.match, lines[start + 1:-2])}
    assert None not in found and len(found) == 4, lines[start + 1:-2]
    assert set(found) == {"default", "constant shift -20", "constant shift +20",
                          "no optional inline"}
    # The default baseline is the last line's default; its change is nil.
    assert int(found["default"].group(2)) == int(total.group(1))
    assert found["default"].group(3) == "+0.00" and float(found["default"].group(4)) == 0
    # The policy is the +20 shift: played as the policy and as a baseline, same bytes.
    assert int(found["constant shift +20"].group(2)) == int(total.group(2))
    # Exactly one shift is marked best: the one with the smaller total.
    marked = [name for name, m in found.items() if m.group(5)]
    smaller = min(("constant shift -20", "constant shift +20"),
                  key=lambda n: int(found[n].group(2)))
    assert marked == [smaller]
    assert re.search(r"evaluate: baselines: \d+ episodes played, \d+ replayed", proc.stderr)

    plain = run_module(*common, "--no-baselines")
    plain_lines = plain.stdout.strip().splitlines()
    assert "baselines on the same modules:" not in plain_lines
    assert plain_lines[-1] == lines[-1]

    bad = run_module(*common, "--baseline-shifts=-20,abc", check=False)
    assert bad.returncode == 2 and "'abc' is not a number" in bad.stderr
