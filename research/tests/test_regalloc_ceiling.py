"""research/regalloc_label_fit.py and research/regalloc_ceiling.py: the label fit tells
departures a feature decides from random ones (no clang), and the ceiling script searches
the -O2 demo corpus with the real clang-22 and writes its decisions."""

import importlib.util
import re
import subprocess
import sys

import numpy as np
import pytest

from mlgo_env.policies.policy import EMULATION_FEATURE
from mlgo_env.training import regalloc_cloning as rc

from research_paths import RESEARCH
from test_regalloc_training import demo_o2


def load_script(name):
    path = RESEARCH / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def decisions_file(tmp_path, learnable):
    """Decisions of four packages: column 0, 1 .. 4 and 32 legal, the emulation evicting
    nothing (32); 10% depart to column 0, where column 0's nr_urgent reads 1 (learnable) or
    at random steps (nr_urgent then 1 at random ones)."""
    rng = np.random.default_rng(0)
    n, f = 1200, len(rc.FEATURES)
    rows = rng.normal(0, 0.1, (n, 33, f + 1)).astype(np.float32)
    rows[:, :, -1] = 0.0
    rows[:, 32, -1] = 1.0
    mask = np.zeros((n, 33), bool)
    mask[:, [0, 1, 2, 3, 4, 32]] = True
    departs = rng.random(n) < 0.1
    marked = departs if learnable else rng.random(n) < 0.1
    rows[:, 0, rc.FEATURES.index("nr_urgent")] = marked.astype(np.float32)
    actions = np.where(departs, 0, 32)
    modules = [f"pkg{i % 4}/m{i % 40}.o" for i in range(n)]
    path = tmp_path / f"decisions-{learnable}.npz"
    np.savez_compressed(path, rows=rows, mask=mask, actions=actions,
                        modules=np.asarray(modules),
                        features=np.asarray(list(rc.FEATURES) + [EMULATION_FEATURE]),
                        gains=np.where(departs, 0.02, 0.0))
    return str(path)


def test_the_label_fit_tells_departures_a_feature_decides_from_random_ones(tmp_path):
    fit = load_script("regalloc_label_fit")
    results = {}
    for learnable in (True, False):
        d = fit.load(decisions_file(tmp_path, learnable), 0.0)
        _, held = fit.cross_fit(d, 4, 3, 8, 200, 0)
        searched, network, right = held[:3]
        assert searched == pytest.approx(0.1 * len(d), rel=0.25)
        results[learnable] = (right / max(network, 1), right / searched)
    assert results[True][0] >= 0.8 and results[True][1] >= 0.8, results
    assert results[False][0] <= 0.3, results
    # Departures below --min-gain count as following the emulation.
    d = fit.load(decisions_file(tmp_path, True), 0.05)
    assert (d.actions == 32).all()


def test_the_ceiling_script_searches_and_writes_decisions(tmp_path):
    exe, corpus = demo_o2()
    out = tmp_path / "d.npz"
    proc = run_module_script("regalloc_ceiling", f"--corpus={corpus}", "--modules=5",
                             "--minutes=0.1", "--workers=1", f"--decisions={out}",
                             f"--cache-dir={tmp_path / 'cache'}")
    lines = proc.stdout.splitlines()
    totals = {}
    for line in lines:
        m = re.match(r"^  (clang's default|emulation \(start\)|search ceiling)\s+total\s+"
                     r"([\d.]+), change ([+-]\d+\.\d\d)%, mean per-module reward", line)
        if m:
            totals[m.group(1)] = float(m.group(2))
    assert set(totals) == {"clang's default", "emulation (start)", "search ceiling"}, lines
    assert totals["search ceiling"] <= totals["emulation (start)"]
    z = np.load(out)
    n = z["actions"].size
    assert n > 0 and z["rows"].shape == (n, 33, len(rc.FEATURES) + 1)
    assert z["gains"].shape == (n,) and (z["gains"] >= 0).all()
    assert re.search(rf"^{n} decisions written to ", proc.stdout, re.M)


def run_module_script(name, *args):
    script = RESEARCH / f"{name}.py"
    proc = subprocess.run([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_the_ceiling_report_survives_modules_without_cost():
    ceiling = load_script("regalloc_ceiling")
    assert ceiling.change(95.0, 100.0) == "-5.00%"
    assert ceiling.change(0.0, 0.0) == "no cost"
    assert ceiling.change(3.0, 0.0) == "from 0"
