"""Residual margin policies (mlgo_env.policies.residual_policy), no clang: with a silent
network the policy is the constant shift exactly; the file form round-trips; the fit
learns a boundary the shift alone cannot draw."""

import numpy as np
import pytest

from mlgo_env.policies import residual_policy as rp
from mlgo_env.policies.policy import Layer, PolicyError, policy_from_json, policy_to_json, transform
from mlgo_env.tuning.baselines import shift_policy

NAMES = ["threshold", "cost_estimate", "inlining_default", "callee_users", "node_count"]


def rows(n=600, seed=0):
    rng = np.random.default_rng(seed)
    threshold = rng.choice([0.0, 5.0, 45.0, 225.0], n)
    cost = rng.normal(40, 60, n).round()
    default = ((np.maximum(threshold, 1) - cost) > 0).astype(float)
    flip = rng.random(n) < 0.02  # clang's bonuses: the default is not always the margin
    default[flip] = 1 - default[flip]
    return np.column_stack([threshold, cost, default, rng.integers(1, 40, n),
                            rng.integers(1, 5000, n)]).astype(float)


def space(seed=1, hidden=4, bound=None):
    rng = np.random.default_rng(seed)
    return rp.ResidualSpace("inlining", NAMES, rng.normal(0, 1, 5), rng.uniform(0.5, 2, 5),
                            Layer(rng.normal(0, 1, (5, hidden)), rng.normal(0, 0.3, hidden),
                                  "relu"), bound)


@pytest.mark.parametrize("bound", [None, 40.0])
@pytest.mark.parametrize("shift", [0.0, -20.0, 35.0])
def test_a_silent_network_is_the_constant_shift(shift, bound):
    r = rows()
    s = space(bound=bound)
    u = rp.with_scale(np.arange(1.0, 6.0), 0.0, shift)
    mine = s.policy(u).decisions(r[:, :5])
    theirs = shift_policy("inlining", shift)
    cols = [NAMES.index(f) for f in theirs.features]
    assert np.array_equal(mine, theirs.decisions(r[:, cols]))
    if shift == 0.0:  # the anchored margin at shift 0 is clang's decision
        assert np.array_equal(mine, r[:, 2].astype(np.int8))


@pytest.mark.parametrize("bound", [None, 8.0])
def test_the_file_form_computes_margin_plus_shift_plus_network(bound):
    r = rows(50)
    s = space(bound=bound)
    u = np.array([3.0, -7.0, 11.0, 0.5, -12.5])
    p = s.policy(u)
    assert len(p.layers) == (2 if bound is None else 3)
    m, a = s.parts(r)
    g = a @ u[:-1]
    if bound is not None:
        assert (np.abs(g) > bound).any() and (np.abs(g) < bound).any()
        g = np.clip(g, -bound, bound)
    expected = m + g + u[-1]
    assert np.allclose(p.logits(r), expected, rtol=0, atol=1e-9)
    assert np.allclose(p.exact_logits(r), expected, rtol=0, atol=1e-9)
    assert np.allclose(s.residual(u, r), g)
    q = policy_from_json(policy_to_json(p), "round trip")
    assert policy_to_json(q)["version"] == 2 and q.margin == rp.MARGIN_SPEC
    s2, u2 = rp.space_of(q)
    assert np.array_equal(u2, u) and s2.bound == bound
    assert np.array_equal(s2.policy(u2).decisions(r), p.decisions(r))


def test_space_of_refuses_other_forms():
    p = shift_policy("inlining", -20.0)
    with pytest.raises(PolicyError, match="not a residual margin policy"):
        rp.space_of(p)
    q = space().policy(np.zeros(5))
    q.layers[0].weights[1, 0] = 0.5  # the margin's pass-through now reads a feature
    with pytest.raises(PolicyError, match="not a residual margin policy"):
        rp.space_of(q)
    b = space(bound=20.0).policy(np.ones(5))
    b.layers[1].bias[3] = -19.0  # the clip is no longer symmetric
    with pytest.raises(PolicyError, match="not a residual margin policy"):
        rp.space_of(b)


def test_the_fit_learns_what_no_constant_shift_can():
    """Target: refuse call sites of callees with many users beyond the margin, inline the
    others a little more; no single shift draws that boundary, the network can."""
    r = rows(1500, seed=3)
    margin = np.maximum(r[:, 0], 1) - r[:, 1]
    many = r[:, 3] > 20
    target = np.where(many, margin - 30 > 0, margin + 15 > 0).astype(float)
    fit = rp.fit("inlining", NAMES, r, target, shift=0.0, hidden=8, l2=1e-4, epochs=1500)
    assert fit.agreement > fit.base_agreement + 0.03
    assert fit.agreement > 0.95
    bounded = rp.fit("inlining", NAMES, r, target, shift=0.0, hidden=8, l2=1e-4,
                     epochs=1500, bound=40.0)
    assert bounded.space.bound == 40.0
    assert bounded.agreement > bounded.base_agreement + 0.03
    assert np.max(np.abs(bounded.space.residual(bounded.u, r))) <= 40.0
    with pytest.raises(ValueError, match="needs the feature"):
        rp.fit("inlining", NAMES[1:], r[:, 1:], target, shift=0.0)


def test_a_bounded_fit_is_not_pulled_by_decisions_it_cannot_move():
    """Labels that refuse a fifth of the call sites far above the boundary (as grouped
    searches do at clang's last-call bonus) are out of the bound's reach: they must not
    drag the fitted shift down and cost the decisions near the boundary."""
    r = rows(1500, seed=4)
    margin = np.maximum(r[:, 0], 1) - r[:, 1]
    rng = np.random.default_rng(5)
    target = np.where(r[:, 3] > 20, margin - 15 > 0, margin > 0)
    target[(margin > 60) & (rng.random(len(r)) < 0.2)] = False
    fit = rp.fit("inlining", NAMES, r, target.astype(float), shift=0.0, hidden=8,
                 l2=1e-4, epochs=1500, bound=40.0)
    assert abs(fit.u[-1]) < 8.0
    near = np.abs(margin) <= 40
    near_fit = rp._scored(fit.space, fit.u, r[near], target[near].astype(float), 0.0)
    assert near_fit.agreement > near_fit.base_agreement + 0.03
    assert fit.agreement > fit.base_agreement


def test_paired_margin_is_the_score_difference_and_its_standard_error():
    from mlgo_env.episodes import EpisodeResult
    from mlgo_env.training.search import objective, objective_terms, paired_margin

    def results(policy_scores, defaults):
        return [EpisodeResult(f"m{i}", 1 - p / d, p, d, 1, 0.0, 0.0, 0.0)
                for i, (p, d) in enumerate(zip(policy_scores, defaults))]
    defaults = [100.0, 2000.0, 50.0, 400.0]
    a = results([90.0, 2010.0, 49.0, 380.0], defaults)
    b = results([101.0, 1990.0, 50.0, 400.0], defaults)
    for w in (0.0, 0.5, 1.0):
        assert objective_terms(a, w).mean() == pytest.approx(objective(a, w))
        margin, se = paired_margin(a, b, w)
        assert margin == pytest.approx(objective(a, w) - objective(b, w))
        diff = objective_terms(a, w) - objective_terms(b, w)
        assert se == pytest.approx(np.std(diff, ddof=1) / 2.0)
    assert paired_margin(a, a, 0.5) == (0.0, 0.0)
    with pytest.raises(ValueError, match="not of the same modules"):
        paired_margin(a, b[::-1], 0.5)


def test_bagging_averages_networks_that_each_left_one_package_out():
    """fit_bagged: the policy's logit is the mean of the per-package networks' logits (each
    fitted without that package's rows, on the shared standardisation), its file form
    decides the same, and a correction only one package's labels ask for is diluted."""
    r = rows(900, seed=5)
    margin = np.maximum(r[:, 0], 1) - r[:, 1]
    groups = np.array(["a", "b", "c"])[np.arange(len(r)) % 3]
    many = r[:, 3] > 20
    # Every package: refuse many-user callees a little; package "c" alone: inline a lot more.
    target = np.where(many, margin - 30 > 0, margin > 0)
    target = np.where(groups == "c", margin + 60 > 0, target).astype(float)
    options = dict(hidden=4, l2=1e-4, epochs=400, seed=2)
    bagged = rp.fit_bagged("inlining", NAMES, r, target, list(groups), 0.0, **options)
    scaling = rp.standardisation(transform(r))
    parts = [rp.fit("inlining", NAMES, r[groups != g], target[groups != g], 0.0,
                    scaling=scaling, **options) for g in ("a", "b", "c")]
    mean_logit = np.mean([p.space.logits(p.u, r) for p in parts], axis=0)
    assert np.allclose(bagged.space.logits(bagged.u, r), mean_logit)
    assert bagged.space.hidden.weights.shape == (len(NAMES), 12)
    policy = bagged.space.policy(bagged.u)
    assert np.array_equal(policy.decisions(r), bagged.space.logits(bagged.u, r) > 0)
    # The many-user refusal is learned; "c"'s own push is one network in three.
    single = rp.fit("inlining", NAMES, r, target, 0.0, **options)
    g_bag = bagged.space.residual(bagged.u, r) + bagged.u[-1]
    g_one = single.space.residual(single.u, r) + single.u[-1]
    assert np.mean(g_bag[many]) < np.mean(g_bag[~many])
    assert np.mean(g_bag[groups == "c"]) < np.mean(g_one[groups == "c"])
    # One package: a plain fit.
    alone = rp.fit_bagged("inlining", NAMES, r, target, ["a"] * len(r), 0.0, **options)
    plain = rp.fit("inlining", NAMES, r, target, 0.0, **options)
    assert np.allclose(alone.u, plain.u)
