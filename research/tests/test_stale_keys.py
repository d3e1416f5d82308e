"""research/stale_keys.py: the stale-entry route's matching, replayed in Python."""
import numpy as np

import research_paths  # noqa: F401
from stale_keys import StaleAnswers, key


def obs(**values):
    return {k: np.array([v], dtype=np.int64) for k, v in values.items()}


def test_the_kth_decision_with_a_key_gets_the_kth_recorded_action_with_it():
    feats = ["a"]
    old = [obs(a=1), obs(a=2), obs(a=1)]
    answers = StaleAnswers([key(o, feats) for o in old], [1, 0, 0], feats)
    info = {"default_action": 1}
    assert answers(obs(a=1, b=9), info) == 1   # first a=1: recorded 1
    assert answers(obs(a=3), info) == 1        # unknown: the default
    assert answers(obs(a=1), info) == 0        # second a=1: recorded 0
    assert answers(obs(a=1), info) == 1        # a third a=1 was never recorded: the default
    assert (answers.from_entry, answers.decisions) == (2, 4)


def test_a_key_reads_only_its_features():
    assert key(obs(a=1, b=2), ["a"]) == key(obs(a=1, b=3), ["a"])
    assert key(obs(a=1, b=2), ["a", "b"]) != key(obs(a=1, b=3), ["a", "b"])
