"""The selection's second test: a learned policy that beats the best baseline on the check
modules is still refused when it does not beat it on the searched packages' held-out
modules (mlgo_env.training.selection.Selection.carries). Fakes stand in for the episodes:
what is tested is the rule, not the compiler."""

from types import SimpleNamespace

from mlgo_env import episodes as ep
from mlgo_env.training.selection import Selection


def results(sizes, defaults):
    return [ep.EpisodeResult(f"m{i}", 1 - p / d, p, d, 1, 0.0, 0.0, 0.0)
            for i, (p, d) in enumerate(zip(sizes, defaults))]


class FakeCache:
    """Answers evaluate() with fixed results per policy name."""

    def __init__(self, by_name):
        self.by_name = by_name
        self.last_seconds = (0.0, 0.0)

    def evaluate(self, pool, policies, modules):
        return [self.by_name[p] for p in policies], []


class Judge(Selection):
    def __init__(self):
        self.args = SimpleNamespace(selection_z=1.0, total_weight=0.5)
        self.clock = SimpleNamespace(account=lambda *a, **k: None)
        self.lines = []

    def log(self, text):
        self.lines.append(text)


DEFAULTS = [1000, 2000, 1500, 800, 1200, 900]
NAMED = [("learned", "learned"), ("constant shift -20", "shift")]


def judge(learned_sizes, shift_sizes):
    cache = FakeCache({"learned": results(learned_sizes, DEFAULTS),
                       "shift": results(shift_sizes, DEFAULTS)})
    rows = {"learned": {"against": "constant shift -20"}}
    j = Judge()
    return j.carries(None, cache, NAMED, rows, [f"m{i}" for i in range(6)]), rows, j.lines


def test_a_policy_that_wins_on_the_held_out_modules_is_kept():
    winner, rows, _ = judge([990, 1980, 1490, 790, 1190, 890], [1000, 2000, 1500, 800, 1200, 900])
    assert winner == 0
    assert rows["learned"]["holdout_margin"] > 0 and rows["learned"]["holdout_modules"] == 6


def test_a_policy_that_loses_there_gives_way_to_the_baseline():
    winner, rows, lines = judge([1010, 2000, 1520, 800, 1200, 900],
                                [1000, 2000, 1500, 800, 1200, 900])
    assert winner == 1 and rows["learned"]["holdout_margin"] < 0
    assert any("does not carry" in line for line in lines)


def test_a_win_within_noise_is_not_enough():
    # One module much better, the others a little worse: positive margin, large spread.
    winner, rows, _ = judge([900, 2004, 1504, 802, 1203, 902], [1000, 2000, 1500, 800, 1200, 900])
    assert rows["learned"]["holdout_margin"] > 0
    assert rows["learned"]["holdout_margin"] <= rows["learned"]["holdout_standard_error"]
    assert winner == 1
