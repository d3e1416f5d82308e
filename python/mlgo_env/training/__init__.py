"""Training: what turns environments and policy forms into a policy file.

- train.py: the trainer (``python -m mlgo_env.train``): trace, cloning, search, the
  check-module selection against the one-number baselines; train_args.py its options;
  train_network.py (flip classifier / imitation network + ES), train_imitation.py
  (labels from grouped-flip searches), train_margin.py (margin-policy searches) its
  methods; exploration.py what it compiles when a round only replayed;
- evaluate.py: a policy against the default and one-number baselines on a corpus
  (``python -m mlgo_env.evaluate``); baselines.py: those one-number baselines;
- search.py, learning.py: the searches and the numpy learning parts;
- replay.py: replays of recorded trajectories (a policy that decides as a recorded
  episode did gets its result without a compile);
- flip_search.py: counterfactual single-decision flips; grouped_flips.py: every call
  site of one callee flipped together, and a greedy search accumulating such groups;
- regalloc_train.py: the eviction trainer (``--problem=regalloc``), regalloc_args.py its
  options; regalloc_cloning.py (cloning the default), regalloc_anchor.py (the clone
  anchored on the host's emulation of the default), regalloc_baselines.py (its baselines);
  antithetic_es.py the ES it runs; regalloc_search.py: a per-function greedy search of
  departures from the emulation (research/regalloc_ceiling.py's ceiling);
- train_report.py, training_setup.py: bookkeeping, and what trainer and evaluator share.

The top layer of the package: it may import the env API (``mlgo_env``), its policies
and its cluster runners; nothing below imports it. Its modules are imported by name
(``from mlgo_env.tuning.replay import ReplayCache``); importing this package loads
none of them.
"""
