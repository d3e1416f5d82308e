"""What the diagnosis scripts share: their common options and a sample of the trainer's
training split (not a script)."""

from __future__ import annotations

from typing import Any

from mlgo_env.episodes import corpus_modules
from mlgo_env.training.training_setup import split_modules


def add_diagnosis_arguments(parser: Any) -> None:
    """The options the diagnosis scripts (research/flip_census.py, rollout_ceiling.py) share."""
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validation-share", type=float, default=0.2)
    parser.add_argument("--cache-dir")


def training_sample(corpus: str, validation_share: float, seed: int, count: int,
                    rng: Any) -> list[str]:
    """`count` modules of the corpus's training split (the trainer's split for `seed` and
    `validation_share`: validation modules are never in it), in `rng`'s random order."""
    train, _ = split_modules(corpus_modules(corpus), validation_share, seed)
    return [train[i] for i in rng.permutation(len(train))[:count]]
