"""A failed episode (clang crashed or timed out under a candidate's decisions) is scored
as twice the default size, not fatal to the training run."""

from mlgo_env import episodes as ep
from mlgo_env.cluster.runner import Failure
from mlgo_env.training.tolerant import FAILED_REWARD, TolerantPlayer


class Runner:
    slots = 3

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)

    def play_outcomes(self, jobs):
        return [self.outcomes.pop(0) for _ in jobs]


def result(module, policy, default):
    return ep.EpisodeResult(module, default / policy - 1, policy, default, 5, 0.1, 0.0, 0.1)


def test_failures_are_scored_and_logged_once_per_module():
    crash = Failure("a.o", "EpisodeFailed: clang-22 exited with code 139\nstack dump")
    runner = Runner([result("a.o", 90, 100), crash, result("b.o", 50, 50),
                     Failure("c.o", "timeout"), crash])
    lines = []
    player = TolerantPlayer(runner, lines.append)
    first = player.play([("a.o", None)])
    assert first[0].policy_score == 90
    second = player.play([("a.o", None), ("b.o", None), ("c.o", None), ("a.o", None)])
    assert [r.module for r in second] == ["a.o", "b.o", "c.o", "a.o"]
    assert second[0].reward == FAILED_REWARD and second[0].policy_score == 200
    assert second[0].default_score == 100
    assert second[1].policy_score == 50
    # A module never seen to succeed: no default to double, the reward still punishes.
    assert second[2].policy_score == 0 and second[2].reward == FAILED_REWARD
    assert player.failures == 3 and set(player.failed_modules) == {"a.o", "c.o"}
    assert len(lines) == 2 and "exited with code 139" in lines[0]
    assert player.slots == 3  # everything else is the runner's
