"""The options of ``python -m mlgo_env.train --problem=regalloc``
(mlgo_env.training.regalloc_train says what each phase does with them)."""

from __future__ import annotations

import argparse
from typing import Sequence

from ..cluster import add_arguments as add_cluster_arguments
from .train_args import add_run_arguments, add_trace_arguments


def parse(argv: Sequence[str] | None, description: str | None) -> argparse.Namespace:
    """Parses `argv` (None: sys.argv); `description` heads --help."""
    p = argparse.ArgumentParser(prog="python -m mlgo_env.train --problem=regalloc",
                                description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True, choices=("regalloc",))
    add_run_arguments(p)
    p.add_argument("--hidden", type=int, default=8, help="tanh hidden units")
    p.add_argument("--start", choices=("emulation", "clone"), default="emulation",
                   help="where ES starts: the clone anchored on the host's emulation of the "
                        "default (departing from it on --departures of the traced "
                        "decisions), or the clone alone")
    p.add_argument("--departures", type=float, default=0.01,
                   help="--start=emulation: the share of the fit modules' traced decisions "
                        "on which the start departs from the emulation")
    p.add_argument("--clone-decisions", type=int, default=2000,
                   help="at most this many traced decisions per module for cloning")
    p.add_argument("--clone-steps", type=int, default=300, help="cloning: full-batch Adam steps")
    p.add_argument("--check-modules", type=int, default=12,
                   help="training modules held out of cloning and ES, to choose on")
    p.add_argument("--max-decisions", type=int, default=1500,
                   help="ES plays fit modules with at most this many traced decisions")
    p.add_argument("--check-max-decisions", type=int, default=0,
                   help="check modules have at most this many traced decisions (0: "
                        "--max-decisions); hot modules are the big ones")
    p.add_argument("--check-packages", default="",
                   help="comma-separated packages (a module's first path component) whose "
                        "modules are only used to check and select, never cloned or "
                        "searched: selection then measures transfer to other packages")
    p.add_argument("--batch-modules", type=int, default=6, help="ES: modules per round")
    p.add_argument("--pairs", type=int, default=4, help="ES: mirrored pairs per round")
    p.add_argument("--sigma", type=float, default=0.05,
                   help="ES: perturbation scale, relative to the clone's parameter RMS "
                        "(--start=emulation: the largest halving of it that keeps perturbed "
                        "starts within twice --departures of the emulation)")
    p.add_argument("--step", type=float, default=1.0,
                   help="ES: gradient step, in units of the perturbation scale")
    p.add_argument("--check-every", type=int, default=4,
                   help="ES: score the current point on the check modules every K rounds")
    p.add_argument("--total-weight", type=float, default=0.5,
                   help="weight of the total-cost reduction in the score (the rest: the "
                        "mean per-module reward)")
    p.add_argument("--rounds", type=int, default=0,
                   help="stop ES after this many rounds (0: when the budget ends)")
    p.add_argument("--no-validation", action="store_true",
                   help="do not play the chosen policy on the validation modules")
    add_trace_arguments(p)
    add_cluster_arguments(p)
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)
