"""Regalloc (eviction) training and evaluation: the one-number policies, behavioural
cloning, the ES step, and `python -m mlgo_env.evaluate/train --problem=regalloc` end to end
with the real clang-22 on the -O2 demo corpus."""

import csv
import os
import re
import subprocess

import numpy as np
import pytest

from mlgo_env.policies.policy import (EMULATION_FEATURE, PolicyError, load_policy,
                                     policy_from_json, policy_to_json, save_policy)
from mlgo_env.training import regalloc_anchor as ra
from mlgo_env.training import regalloc_baselines as rbl
from mlgo_env.training import regalloc_cloning as rc
from mlgo_env.policies.optimiser import centred_ranks
from mlgo_env.training.antithetic_es import AntitheticES
from mlgo_env.training.regalloc_train import Candidate, RegallocTrainer, choose
from mlgo_env.training.train import parse_args

from test_train import run_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
NUMBER = r"(\d+\.\d)"
TOTAL = re.compile(rf"^total: default {NUMBER}, policy {NUMBER}, change ([+-]\d+\.\d\d)%$")
ROW = re.compile(rf"^(\S+)\s+{NUMBER}\s+{NUMBER}\s+([+-]\d+\.\d{{5}})$")
BASELINE = re.compile(rf"^  (.+?)\s+total {NUMBER}, change ([+-]\d+\.\d\d)%, mean per-module "
                      r"reward ([+-]\d\.\d{5})(  <- best one-number policy \(chosen on these "
                      r"modules: an optimistic baseline\))?$")


def observation(density, mask, **others):
    obs = {"mask": np.asarray(mask, dtype=np.int64).reshape(1, 33),
           "use_def_density": np.asarray(density, dtype=np.float32).reshape(1, 33),
           "progress": np.array([0.5], dtype=np.float32)}
    for name in ("nr_defs_and_uses", "liverange_size"):
        obs[name] = np.asarray(others.get(name, np.ones(33)), np.float32).reshape(1, 33)
    return obs


def test_one_number_policies_decide_as_documented():
    mask = np.zeros(33, int)
    mask[[3, 7, 9, 32]] = 1
    density = np.full(33, 0.5)
    density[[3, 7, 9, 32]] = [0.4, 0.1, np.nan, 0.2]   # 9 unspillable, 0.0 at 0 is masked
    density[0] = 0.0
    sizes = np.ones(33)
    sizes[[3, 7, 9, 32]] = [0.9, 0.8, 0.05, 0.7]
    policies = dict(rbl.one_number_policies())
    obs = observation(density, mask, liverange_size=sizes)
    assert policies["lowest use_def_density"].act(obs) == 7
    assert policies["lowest liverange_size"].act(obs) == 9   # its density is NaN, size is not
    assert policies["first allowed candidate"].act(obs) == 3
    density[7] = 0.3                                     # the live range itself is lightest
    assert policies["lowest use_def_density"].act(observation(density, mask)) == 32
    for _, p in policies.items():
        assert policy_to_json(p)["version"] == 3 and p.decision == "argmax-masked"


def synthetic_decisions(rng, n):
    """Decisions of the rule "evict the allowed candidate with the lowest use_def_density
    minus 0.3 for a hint; index 32 (never hinted) competes alike" (a per-candidate rule)."""
    features = list(rc.FEATURES)
    rows = rng.uniform(0, 1, (n, 33, len(features))).astype(np.float32)
    hint = features.index("is_hint")
    rows[:, :, hint] = rng.uniform(0, 1, (n, 33)) < 0.2
    rows[:, 32, hint] = 0
    mask = rng.uniform(0, 1, (n, 33)) < 0.3
    mask[:, 32] = True
    density = rows[:, :, features.index("use_def_density")]
    score = np.where(mask, -density + 0.3 * rows[:, :, hint], -np.inf)
    actions = np.argmax(score, axis=1)
    return rc.Decisions(features, rows, mask, actions, ["m"] * n)


def test_cloning_learns_a_rule_the_features_express():
    rng = np.random.default_rng(0)
    train, held = synthetic_decisions(rng, 3000), synthetic_decisions(rng, 1000)
    lowest = rbl.one_number_policy("lowest", "use_def_density", -1.0)
    fitted = rc.fit(train, 8, rng, steps=300)
    # The hint bonus is what the one-number policy misses and the network must learn.
    assert rc.agreement(fitted.policy, held) > rc.agreement(lowest, held) + 0.03
    assert rc.agreement(fitted.policy, held) > 0.9
    # The vectorised choices are the policy's own (exact) answers.
    for k in range(0, 40):
        assert fitted.policy.act(observation_of(train, k)) == rc.choices(
            fitted.policy, train.subset(np.arange(len(train)) == k))[0]


def observation_of(d, k):
    """Decision k of `d` as an observation (one [1, 33] tensor per feature)."""
    obs = {f: d.rows[k, :, j].reshape(1, 33) for j, f in enumerate(d.features)}
    obs["mask"] = d.mask[k].astype(np.int64).reshape(1, 33)
    obs["progress"] = d.rows[k, :1, d.features.index("progress")]
    return obs


def test_an_anchored_start_keeps_the_emulation_but_where_the_clone_disagrees_most():
    rng = np.random.default_rng(3)
    d = synthetic_decisions(rng, 2000)   # their actions stand for the emulation's choices
    clone = rc.fit(d, 4, rng, steps=0).policy   # the lowest-use_def_density rule
    assert 0.5 < rc.agreement(clone, d) < 0.95   # it misses the hint bonus
    gaps = ra.departure_gaps(clone, d)
    with_em = ra.with_emulation(d)
    for share in (0.0, 0.05, 0.2):
        start, bonus = ra.anchored(clone, d, share)
        departed = rc.choices(start, with_em) != d.actions
        # It departs on the requested share (the decision whose gap is the bonus, a tie,
        # may go either way), exactly where the clone's gap is largest.
        assert abs(departed.mean() - share) <= 1.0 / len(d) + 1e-9
        assert np.all(gaps[departed] >= bonus - 1e-9)
        assert np.all(gaps[~departed] <= bonus + 1e-9)
    # The file keeps the emulation's feature; Python's exact runner takes it from
    # info["default_action"] and answers as the vectorised choices.
    again = policy_from_json(policy_to_json(start))
    assert again.features[-1] == EMULATION_FEATURE and policy_to_json(again)["version"] == 3
    choices = rc.choices(start, with_em)
    for k in range(30):
        info = {"default_action": int(d.actions[k])}
        assert again.act(observation_of(d, k), info) == choices[k]
    with pytest.raises(PolicyError, match="default_action"):
        again.act(observation_of(d, 0))
    # The emulation alone, as a policy file, is the emulation.
    emulation = ra.emulation_policy()
    assert rc.agreement(emulation, with_em) == 1.0
    assert emulation.act(observation_of(d, 5), {"default_action": int(d.actions[5])}) == \
        d.actions[5]


def test_the_perturbation_scale_is_narrowed_until_perturbed_starts_stay_near_the_emulation():
    rng = np.random.default_rng(4)
    d = synthetic_decisions(rng, 1500)
    start, _ = ra.anchored(rc.fit(d, 4, rng, steps=0).policy, d, 0.02)
    with_em = ra.with_emulation(d)
    scale = ra.calibrated_scale(start, with_em, 10.0, 0.02, rng)
    assert scale < 10.0                  # 10 sends perturbed starts anywhere
    theta = start.flat()
    away = [1 - rc.agreement(start.with_flat(theta + scale * rng.standard_normal(theta.size)),
                             with_em) for _ in range(12)]
    assert np.mean(away) <= 0.06         # twice the share, with room for the draws
    assert ra.calibrated_scale(start, with_em, scale / 4, 0.02, rng) == scale / 4


def test_check_packages_are_only_checked_and_big_modules_may_check(monkeypatch):
    modules = [f"{p}/m{i}.o" for p in ("a", "b", "c", "d") for i in range(6)]
    counts = {m: (5000 if m.endswith("m0.o") else 10 + i) for i, m in enumerate(modules)}
    rng = np.random.default_rng(5)
    d = synthetic_decisions(rng, len(modules) * 3)
    d = rc.Decisions(d.features, d.rows, d.mask, d.actions,
                     [m for m in modules for _ in range(3)], counts)
    monkeypatch.setattr(rc, "load_decisions", lambda *args, **kw: d)

    def split(*options):
        args = parse_args(["--problem=regalloc", "--corpus=x", "--output=o", "--minutes=1",
                           "--check-modules=4", *options])
        fit, held, _ = RegallocTrainer(args, None).split_decisions("trace", modules)
        return set(fit.modules), set(held.modules)

    fit, held = split("--check-packages=b,d")
    assert len(held) == 4 and {m.split("/")[0] for m in held} <= {"b", "d"}
    assert not any(m.startswith(("b/", "d/")) for m in fit)   # never cloned or searched
    assert fit == {m for m in modules if m.startswith(("a/", "c/"))}
    assert not any(m.endswith("m0.o") for m in held)          # 5000 > MAX_DECISIONS
    _, held = split("--check-packages=b,d", "--check-modules=12", "--check-max-decisions=6000")
    assert held == {m for m in modules if m.startswith(("b/", "d/"))}
    fit, held = split()                                        # no packages: as before
    assert len(held) == 4 and not fit & held and fit | held == set(modules)
    with pytest.raises(ValueError, match="no training module of e"):
        split("--check-packages=b,e")


def test_antithetic_es_climbs_a_smooth_function():
    rng = np.random.default_rng(1)
    target = np.array([1.0, -2.0, 0.5])
    es = AntitheticES(np.zeros(3), sigma=0.1, step=0.1, pairs=4)
    for _ in range(200):
        candidates = es.propose(rng)
        es.tell([-float(np.sum((c - target) ** 2)) for c in candidates])
    assert np.linalg.norm(es.theta - target) < 0.2
    # Ranks: an outlier counts as much as any worse candidate, ties share their rank.
    assert centred_ranks(np.array([3.0, -1e9, 1.0, 1.0])).tolist() == [0.5, -0.5, 0.0, 0.0]
    flat = AntitheticES(np.zeros(3), sigma=0.1, step=0.1, pairs=2)
    flat.propose(rng)
    assert flat.tell([1.0] * 4) == 0.0 and np.all(flat.theta == 0)   # all alike: no move


def test_selection_needs_a_learned_policy_to_beat_every_reference():
    lowest = rbl.one_number_policy("lowest use_def_density", "use_def_density", -1.0)
    first = rbl.one_number_policy("first allowed candidate", "progress", 0.0)
    learned = lowest.with_flat(lowest.flat() * 2)

    def cands(default, one, two, mine):
        return [Candidate("default", None, default, {}, False),
                Candidate("lowest", lowest, one, {}, False),
                Candidate("first", first, two, {}, False),
                Candidate("ES round 4", learned, mine, {}, True)]

    chosen, note = choose(cands(0.0, -0.1, -0.2, 0.01))
    assert chosen.policy is learned and note.startswith("chosen: ES round 4")
    chosen, note = choose(cands(0.0, 0.02, -0.2, 0.01))       # a one-number policy is better
    assert chosen.policy is lowest and "returning the best of those: lowest" in note
    chosen, note = choose(cands(0.0, -0.1, -0.2, -0.01))      # the default is best
    assert chosen.name == "default" and chosen.policy is learned   # the best file carries it
    assert "deploy no policy" in note


# -- with clang ------------------------------------------------------------------------
def demo_o2():
    exe = os.environ.get("MLGO_ENV") or os.path.join(ROOT, "build", "src", "mlgo-env")
    corpus = os.path.join(os.path.dirname(os.path.dirname(exe)), "corpus", "demo-O2")
    if not os.path.isfile(os.path.join(corpus, "corpus_description.json")):
        pytest.fail(f"the -O2 demo corpus is not built at {corpus}")
    return exe, corpus


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """A default regalloc trace of the whole -O2 demo corpus, its per-module scores, and a
    cache directory the tests share."""
    exe, corpus = demo_o2()
    work = tmp_path_factory.mktemp("regalloc")
    trace = str(work / "trace.log")
    subprocess.run([exe, "trace", "--problem=regalloc", f"--corpus={corpus}", "--sampling-rate=1",
                    f"--output={trace}", "--jobs=2", f"--cache-dir={work / 'cache'}",
                    "--no-progress"], check=True, stdout=subprocess.PIPE)
    per_module = {}   # the module's own row (context = module): its whole-module scores
    with open(trace + ".csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["context"] == row["module"]:
                per_module[row["module"]] = (float(row["default_score"]),
                                             float(row["policy_score"]))
    counts = rc.load_decisions(trace, sorted(per_module), 10, np.random.default_rng(0)).counts
    return corpus, trace, work, per_module, counts


def test_evaluate_regalloc_reports_totals_the_rows_sum_to(traced, tmp_path):
    corpus, _, work, per_module, counts = traced
    # The three deciding modules with the fewest decisions (cheap, and a policy matters).
    modules = sorted((c, m) for m, c in counts.items() if c > 0)[:3]
    modules = [m for _, m in modules]
    policy = tmp_path / "lowest.json"
    save_policy(rbl.one_number_policy("lowest use_def_density", "use_def_density", -1.0), policy)
    proc = run_module("mlgo_env.evaluate", "--problem=regalloc", f"--policy={policy}",
                      f"--corpus={corpus}", "--workers=2", f"--cache-dir={work / 'cache'}",
                      f"--modules={','.join(modules)}")
    lines = proc.stdout.strip().splitlines()
    total = TOTAL.match(lines[-1])
    assert total, lines[-1]
    assert lines[-2].startswith("mean per-module reward: ") and "over 3 modules" in lines[-2]
    rows = [m for m in map(ROW.match, lines[1:4])]
    assert all(rows) and [r.group(1) for r in rows] == modules, lines[:4]
    default, chosen = (float(total.group(i)) for i in (1, 2))
    assert abs(sum(float(r.group(2)) for r in rows) - default) <= 0.05 * 3 + 1e-9
    assert abs(sum(float(r.group(3)) for r in rows) - chosen) <= 0.05 * 3 + 1e-9
    rewards = [float(r.group(4)) for r in rows]
    assert float(lines[-2].split()[3]) == pytest.approx(np.mean(rewards), abs=1e-5)
    start = lines.index("baselines on the same modules:")
    found = {m.group(1): m for m in map(BASELINE.match, lines[start + 1:-2])}
    assert None not in found and set(found) == {
        rbl.DEFAULT_NAME, rbl.EMULATION_NAME, *(n for n, _, _ in rbl.ONE_NUMBER)}
    # The default is the plain compile: +0.00%, the same total as the policy's default.
    assert found[rbl.DEFAULT_NAME].group(3) == "+0.00"
    assert float(found[rbl.DEFAULT_NAME].group(2)) == default
    # The policy is that one-number policy: its baseline row has the policy's total.
    assert float(found["lowest use_def_density"].group(2)) == chosen
    assert sum(bool(m.group(5)) for m in found.values()) == 1
    # The emulation's episodes in Python score what `mlgo-env trace` (C++) scored.
    emulated = sum(per_module[m][1] for m in modules)
    assert float(found[rbl.EMULATION_NAME].group(2)) == pytest.approx(emulated, abs=0.1)


def test_train_regalloc_writes_a_policy_that_evaluates(traced, tmp_path):
    corpus, trace, work, _, counts = traced
    out = tmp_path / "policy.json"
    proc = run_module("mlgo_env.train", "--problem=regalloc", f"--corpus={corpus}",
                      f"--output={out}", "--minutes=3", "--workers=2", f"--trace={trace}",
                      f"--cache-dir={work / 'cache'}", "--check-modules=3", "--rounds=1",
                      "--pairs=1", "--batch-modules=2")
    assert "behavioural cloning:" in proc.stdout and "ES round 1:" in proc.stdout, proc.stdout
    assert "anchored on the emulation: bonus" in proc.stdout, proc.stdout
    policy = load_policy(out)
    assert policy.problem == "regalloc" and policy.decision == "argmax-masked"
    assert policy_to_json(policy)["version"] == 3
    meta = policy.metadata
    # Measured with these options (seeds 0-2): the clone agrees with the default on 79-93%
    # of the 60-92 decisions of its 3 held-out check modules; the first-allowed rule agrees
    # on about 6% of the decisions of real code.
    clone = load_policy(str(out) + ".clone.json")
    assert clone.metadata["check_agreement"] > 0.6, clone.metadata
    assert meta["chosen"] and meta["selection"].startswith(("chosen:", "no learned"))
    deciding = sorted((c, m) for m, c in counts.items() if c > 0)[:2]
    proc = run_module("mlgo_env.evaluate", "--problem=regalloc", f"--policy={out}",
                      f"--corpus={corpus}", "--workers=2", f"--cache-dir={work / 'cache'}",
                      f"--modules={','.join(m for _, m in deciding)}", "--no-baselines")
    assert TOTAL.match(proc.stdout.strip().splitlines()[-1]), proc.stdout
