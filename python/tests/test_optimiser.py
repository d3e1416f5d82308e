"""mlgo_env.policies.optimiser: Adam, the standardisation policy files store, centred
ranks (no clang)."""

import numpy as np

from mlgo_env.policies.optimiser import adam_step, centred_ranks, standardisation


def test_adam_descends_a_quadratic_in_place():
    target = np.array([3.0, -2.0])
    x = np.zeros(2)
    m, v = np.zeros(2), np.zeros(2)
    for step in range(1, 2001):
        adam_step([x], [2.0 * (x - target)], [m], [v], step, 0.05)
    np.testing.assert_allclose(x, target, atol=1e-3)


def test_standardisation_floors_or_replaces_a_constant_column():
    rows = np.array([[1.0, 5.0], [3.0, 5.0]])
    mean, std = standardisation(rows)
    assert mean.tolist() == [2.0, 5.0] and std.tolist() == [1.0, 1e-3]
    _, std = standardisation(rows, floor=1e-9, constant=1.0)
    assert std.tolist() == [1.0, 1.0]
    mean, std = standardisation(np.zeros((0, 3)))
    assert mean.tolist() == [0.0] * 3 and std.tolist() == [1.0] * 3


def test_centred_ranks_share_ties_and_span_the_unit_interval():
    np.testing.assert_allclose(centred_ranks(np.array([10.0, -3.0, 7.0, 0.0])),
                               [0.5, -0.5, 1 / 6, -1 / 6])
    assert centred_ranks(np.array([1.0, 1.0, 2.0])).tolist() == [-0.25, -0.25, 0.5]
    assert centred_ranks(np.array([4.0])).tolist() == [0.0]
