"""The trainer's command line (mlgo_env.training.train documents the method)."""

from __future__ import annotations

import argparse
import os
from typing import Sequence

from ..cluster import add_arguments as add_cluster_arguments
from ..policies.margin_policy import DEFAULT_SHAPE


#: --flip-rates defaults per method
CLASSIFIER_RATES = "0.001,0.0025,0.005,0.01,0.02"
IMITATION_RATES = "0.005,0.01,0.02,0.04,0.08"


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """What every trainer (inlining, regalloc) is told first: the corpus, the policy file
    to write, the budget, the workers, the seed and the validation split."""
    p.add_argument("--corpus", required=True)
    p.add_argument("--output", required=True, help="the policy JSON to write")
    p.add_argument("--minutes", type=float, required=True, help="training budget")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    p.add_argument("--remote", help="unix:PATH or HOST:PORT of an mlgo-env server")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--validation-share", type=float, default=0.2)


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    """Every trainer's default trace, caches and scratch space."""
    p.add_argument("--trace", help="reuse this default trace (its CSV beside it)")
    p.add_argument("--trace-sampling-rate", type=float, default=0.5)
    p.add_argument("--cache-dir")
    p.add_argument("--temp-dir", help="compilers' scratch directory (default /dev/shm if "
                                      "writable)")
    p.add_argument("--mlgo-env", help="the mlgo-env executable (for the trace)")


def parse_args(argv: Sequence[str] | None, description: str = "") -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.train", description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True)
    add_run_arguments(p)
    p.add_argument("--shape", default=",".join(DEFAULT_SHAPE),
                   help="comma-separated shape features of the margin policy")
    p.add_argument("--no-anchor", dest="anchor", action="store_false",
                   help="search the plain margin rule, not the margin anchored to clang's "
                        "decision (mlgo_env.policies.margin_policy)")
    p.add_argument("--sigma", type=float, default=10.0,
                   help="typical initial step, in clang cost units (5 = one instruction)")
    p.add_argument("--method", choices=("classifier", "imitation", "residual", "coordinate",
                                        "es"),
                   default="classifier",
                   help="classifier: a flip classifier learned from single-flip counterfactuals, "
                        "then ES on its output layer (mlgo_env.policies.flip_classifier); "
                        "imitation: the same network imitating the per-module best "
                        "trajectories a greedy search of grouped flips found "
                        "(mlgo_env.tuning.inlining_search); "
                        "residual: a network moving clang's margin from the best constant "
                        "shift, imitating grouped-flip searches from that shift "
                        "(mlgo_env.training.train_residual); "
                        "coordinate: "
                        "one margin coordinate up/down per round; es: mirrored Gaussian pairs "
                        "plus a gradient step on the margin policy (mlgo_env.training.search)")
    p.add_argument("--flip-share", type=float, default=0.6,
                   help="classifier: share of the budget left after the trace spent collecting "
                        "single flips of the search modules' default trajectories")
    p.add_argument("--flips-per-module", type=int, default=40,
                   help="classifier: at most this many single flips per search module")
    p.add_argument("--hidden", type=int, default=8, help="classifier: tanh hidden units")
    p.add_argument("--l2", type=float, default=1e-2, help="classifier: weight decay")
    p.add_argument("--flip-rates",
                   help="classifier/imitation: the output biases tried first flip these "
                        "shares of the search modules' default decisions (default: "
                        f"classifier {CLASSIFIER_RATES}; imitation {IMITATION_RATES}, its "
                        "labels flip a few percent of the decisions)")
    p.add_argument("--base-shifts", default="-40,-20,-10,10,20",
                   help="residual: the constant shifts (with the default) scored on the search "
                        "modules; the best is where the network starts")
    p.add_argument("--residual-scales", default="0,0.5,1,2",
                   help="residual: the network's output scales tried before its ES (0: the "
                        "fitted shift alone)")
    p.add_argument("--residual-bound", type=float, default=40.0,
                   help="residual: the network moves clang's margin by at most this many "
                        "cost units (0: unbounded)")
    p.add_argument("--residual-bagging", choices=("none", "packages"), default="none",
                   help="residual: one network per searched package, each fitted without "
                        "that package's labels, averaged (corrections the packages agree on "
                        "stay, the others are diluted)")
    p.add_argument("--temperature", type=float, default=10.0,
                   help="residual: the logistic fit's scale in clang cost units")
    p.add_argument("--explore-batch", type=int, default=0,
                   help="episodes exploration compiles when a search round only replayed "
                        "(new single flips, new training modules; 0: 4 per worker slot)")
    p.add_argument("--label-weights", choices=("uniform", "bytes"), default="uniform",
                   help="imitation: every labelled decision weighs the same (uniform), or "
                        "as much as its callee group was worth in the search, in bytes of "
                        "its module (bytes; mlgo_env.training.search_labels.imitation_labels; "
                        "on 13 C packages it lost to uniform: docs/training-transfer.md)")
    p.add_argument("--refit-growth", type=float, default=0.25,
                   help="classifier/imitation: refit the network once exploration grew its "
                        "labels by this share")
    p.add_argument("--baseline-shifts", default="-40,-20,-10,10,20,40",
                   help="constant margin shifts (cost units) the chosen policy must beat on "
                        "the check modules (with no optional inline); '' for none")
    p.add_argument("--selection-z", type=float, default=1.0,
                   help="the learned policy is written only if it beats the best baseline on "
                        "the check modules by more than this many standard errors of the "
                        "per-module differences (0: by any margin)")
    p.add_argument("--pairs", type=int, default=4, help="es: mirrored pairs per round")
    p.add_argument("--total-weight", type=float, default=0.5,
                   help="weight of the total-bytes reduction in the score (the rest: the "
                        "mean per-module reward)")
    p.add_argument("--search-modules", type=int, default=200)
    p.add_argument("--check-modules", type=int, default=100)
    p.add_argument("--check-packages", default="",
                   help="comma-separated packages (a module's first path component) whose "
                        "modules are only used to check and select, never searched or "
                        "explored: selection then measures transfer to other packages")
    p.add_argument("--holdout-share", type=float, default=0.25,
                   help="share of the searched packages' deciding training modules kept out "
                        "of the search and exploration; a learned policy must also beat the "
                        "best baseline on them to be chosen (0: no such test)")
    p.add_argument("--validate-every", type=int, default=0,
                   help="also report the incumbent on the validation modules every K rounds "
                        "(report only, never used to choose; 0: at the end only)")
    p.add_argument("--report-seconds", type=float, default=15.0,
                   help="progress line and checkpoint at most this often (and at each new "
                        "incumbent)")
    add_trace_arguments(p)
    p.add_argument("--resume", action="store_true", help="continue from OUTPUT.ckpt.npz")
    p.add_argument("--rounds", type=int, default=0,
                   help="stop the search after this many rounds (0: when the budget ends)")
    add_cluster_arguments(p)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    if a.flip_rates is None:
        a.flip_rates = IMITATION_RATES if a.method == "imitation" else CLASSIFIER_RATES
    return a
