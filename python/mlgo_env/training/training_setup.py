"""What the trainer and the evaluator share: finding mlgo-env, splitting a corpus,
opening environments, and the feature list a policy for a problem may use."""

from __future__ import annotations

import hashlib
import os
import subprocess
from typing import Any, Callable, Sequence

from .._native import find_mlgo_env  # noqa: F401 - the trainers' import
from ..episodes import env_factory, scratch_dir  # noqa: F401 - where trainers and scripts import them

SUPPORTED_PROBLEMS = ("inlining", "regalloc")


#: the note scripts/make_eval_corpus.sh leaves in a corpus built for evaluation only
EVALUATION_ONLY = "EVALUATION-ONLY"


def refuse_evaluation_corpus(corpus: str) -> None:
    """ValueError if `corpus` was built for evaluation only (its packages are reserved:
    training or tuning on them would make every evaluation on them meaningless)."""
    if os.path.exists(os.path.join(corpus, EVALUATION_ONLY)):
        raise ValueError(f"corpus {corpus} is for evaluation only ({EVALUATION_ONLY} in it: "
                         "built by scripts/make_eval_corpus.sh); train on another corpus")


def split_modules(modules: Sequence[str], validation_share: float, seed: int
                  ) -> tuple[list[str], list[str]]:
    """(training, validation): a module is held out when a seeded hash of its name falls
    below `validation_share`, so the split is stable as the corpus grows."""
    train, val = [], []
    for m in modules:
        h = hashlib.sha256(f"{seed}:{m}".encode()).digest()
        (val if int.from_bytes(h[:8], "little") / 2.0**64 < validation_share else train).append(m)
    return train, val


def training_split(args: Any, log: Callable[[str], None]) -> tuple[list[str], list[str]]:
    """A trainer's (training, validation) modules of --corpus (split_modules with
    --validation-share and --seed), logged. ValueError when the corpus is too small to
    split or the folder of --output is not writable."""
    from ..episodes import corpus_modules
    modules = corpus_modules(args.corpus)
    train, val = split_modules(modules, args.validation_share, args.seed)
    if not train or not val:
        raise ValueError(f"corpus has {len(modules)} modules: too few to split into "
                         "training and validation")
    if not os.access(os.path.dirname(os.path.abspath(args.output)), os.W_OK):
        raise ValueError(f"cannot write the policy into '{os.path.dirname(args.output)}'")
    log(f"{len(modules)} modules: {len(train)} training, {len(val)} validation")
    return train, val


def check_placement(scheduler: str | None, remote: str | None) -> None:
    """ValueError when a command is given both a cluster (--scheduler) and a server
    (--remote) to run its environments."""
    if scheduler and remote:
        raise ValueError("--scheduler runs environments on the cluster's workers; "
                         "--remote names a server: give one of them")


def run_trace(mlgo_env_path: str, problem: str, corpus: str, output: str, jobs: int,
              seed: int, sampling_rate: float, cache_dir: str | None) -> None:
    """Writes a default-policy trace of the corpus with `mlgo-env trace`."""
    cmd = [mlgo_env_path, "trace", f"--problem={problem}", f"--corpus={corpus}",
           f"--output={output}", f"--jobs={jobs}", f"--seed={seed}",
           f"--sampling-rate={sampling_rate}", "--no-progress"]
    if cache_dir:
        cmd.append(f"--cache-dir={cache_dir}")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"mlgo-env trace failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
