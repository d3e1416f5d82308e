"""research/label_transfer.py (the labels' transfer diagnosis), no clang: its AUC, and a
run on labels whose flips one feature decides in every package."""

import importlib.util

import numpy as np


from research_paths import RESEARCH
from flip_search import FlipSet

SCRIPT = RESEARCH / "label_transfer.py"
spec = importlib.util.spec_from_file_location("label_transfer", SCRIPT)
label_transfer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(label_transfer)

NAMES = ["threshold", "cost_estimate", "callee_users", "inlining_default"]


def test_auc_counts_ties_as_half():
    y = np.array([False, False, True, True])
    assert label_transfer.auc(np.array([0.1, 0.2, 0.3, 0.4]), y) == 1.0
    assert label_transfer.auc(np.array([0.4, 0.3, 0.2, 0.1]), y) == 0.0
    assert label_transfer.auc(np.zeros(4), y) == 0.5
    assert np.isnan(label_transfer.auc(np.zeros(4), np.zeros(4, bool)))


def labels_file(tmp_path, flip_worth=1.0, keep_worth=1.0):
    """Labels of three packages whose flips `callee_users > 45` decides."""
    rng = np.random.default_rng(0)
    n = 900
    users = rng.integers(1, 60, n).astype(float)
    rows = np.column_stack([np.full(n, 5.0), rng.normal(-20, 30, n), users, np.ones(n)])
    modules = [f"pkg{i % 3}/m{i % 30}.o" for i in range(n)]
    rewards = np.where(users > 45, flip_worth, -keep_worth)
    labels = FlipSet(NAMES, modules, np.arange(n), rows, np.ones(n, dtype=np.int64),
                     rewards, {m: 30 for m in set(modules)})
    path = tmp_path / "labels.npz"
    labels.save(str(path))
    return str(path), rewards


def test_flips_one_feature_decides_transfer_across_packages(tmp_path, capsys):
    path, _ = labels_file(tmp_path)
    assert label_transfer.main([path, "--hidden=4"]) == 0
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if s.startswith("leave-one-package-out"))
    assert float(line.split("AUC ")[1].split()[0]) > 0.95
    assert "byte proxy" not in out  # unweighted labels carry no bytes
    assert label_transfer.main([str(tmp_path / "missing.npz")]) == 1


def test_weighted_labels_get_the_byte_proxy(tmp_path, capsys):
    path, rewards = labels_file(tmp_path, flip_worth=2.0, keep_worth=0.5)
    assert label_transfer.main([path, "--hidden=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(s for s in out if s.startswith("byte proxy"))
    assert f"oracle {rewards[rewards > 0].sum() / 30:+.3f}" in head
    uniform = next(s for s in out if s.strip().startswith("uniform")).split()
    assert float(uniform[2]) > 0  # the top 0.5% of each package are true flips
