"""The command line of ``python -m mlgo_env.train``: the options every trainer shares,
then the chosen problem's trainer's, then the chosen method's (mlgo_env.training.methods),
so ``--problem=P [--method=M] --help`` lists only what applies."""

from __future__ import annotations

import argparse
import os
from typing import Any, Mapping, Sequence

from ..cluster import add_arguments as add_cluster_arguments
from . import methods

PROG = "python -m mlgo_env.train"


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """What every trainer is told: the corpus, the policy file to write, the budget, where
    episodes run, the default trace, and how the training modules are used."""
    p.add_argument("--corpus", required=True)
    p.add_argument("--output", required=True, help="the policy JSON to write")
    p.add_argument("--minutes", type=float, required=True, help="training budget")
    p.add_argument("--rounds", type=int, default=0,
                   help="stop the search after this many rounds (0: when the budget ends)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    add_cluster_arguments(p)
    p.add_argument("--remote", help="unix:PATH or HOST:PORT of an mlgo-env server")
    p.add_argument("--mlgo-env", help="the mlgo-env executable (for the trace)")
    p.add_argument("--cache-dir")
    p.add_argument("--trace", help="reuse this default trace (its CSV beside it)")
    p.add_argument("--trace-sampling-rate", type=float, default=0.5)
    p.add_argument("--validation-share", type=float, default=0.2,
                   help="share of the corpus's modules (a seeded hash of their names) "
                        "played once, at the end, to report; never used to choose")
    p.add_argument("--check-modules", type=int, default=100,
                   help="training modules never searched, on which the candidates are "
                        "checked and the result is chosen (regalloc default: 12)")
    p.add_argument("--check-packages", default="",
                   help="comma-separated packages (a module's first path component) whose "
                        "modules only check and select, never fitted nor searched: "
                        "selection then measures transfer to other packages")
    p.add_argument("--total-weight", type=float, default=0.5,
                   help="weight of the total reduction in the score (the rest: the mean "
                        "per-module reward)")
    p.add_argument("--quiet", action="store_true")


def parse(argv: Sequence[str] | None, trainers: Mapping[str, Any]
          ) -> tuple[argparse.Namespace, type[methods.Method]]:
    """(the options, the chosen method's class). `trainers` maps each problem to its
    trainer class (its doc heads --help; ``add_arguments(group)`` adds its options;
    ``option_defaults`` changes defaults of the common ones)."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--problem")
    first.add_argument("--method")
    known = first.parse_known_args(argv)[0]
    trainer = trainers.get(known.problem)
    p = argparse.ArgumentParser(prog=PROG, description=trainer.__doc__ if trainer else None,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True, choices=sorted(trainers))
    choices = methods.names(known.problem) if trainer else []
    method = None
    if known.method is None or known.method in choices:
        method = methods.method_class(known.problem, known.method) if trainer else None
    p.add_argument("--method", choices=choices or None, default=method.name if method else None,
                   help="; ".join(f"{n}: {methods.method_class(known.problem, n).summary}"
                                  for n in choices) or "(give --problem first)")
    add_common_arguments(p)
    if trainer:
        trainer.add_arguments(p.add_argument_group(f"--problem={known.problem}"))
        p.set_defaults(**trainer.option_defaults)
    if method:
        method.add_arguments(p.add_argument_group(f"--method={method.name}",
                                                  description=method.summary))
        p.set_defaults(**method.option_defaults)
    args = p.parse_args(argv)
    return args, method
