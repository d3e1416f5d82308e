"""Training: what turns environments and policy forms into a policy file.

- methods/: the Method interface (fit: behavioural cloning of the default; propose and
  tell: the search; the policy a search vector stands for), its registry, and one module
  per method: margin_es.py (inlining, ES over the margin policy), regalloc_es.py
  (regalloc, antithetic ES from the clone anchored on the emulation);
- train.py: ``python -m mlgo_env.train`` and the inlining trainer (trace, the method's
  fit and rounds, the check-module selection against the one-number baselines:
  selection.py; which modules: module_sets.py; search.py its ES and score);
  regalloc_train.py the regalloc trainer (cloning data: regalloc_cloning.py, the anchor:
  regalloc_anchor.py, the baselines: regalloc_baselines.py, its ES: antithetic_es.py);
  train_args.py the command line (common options, the trainer's, the method's);
- evaluate.py: a policy against the default and one-number baselines on a corpus
  (``python -m mlgo_env.evaluate``);
- train_report.py, training_setup.py, tolerant.py: bookkeeping, what trainers and the
  evaluator share, episodes that fail.

The layer above mlgo_env.tuning: it may import the env API (``mlgo_env``), its policies,
its cluster runners and tuning; nothing below imports it. Its modules are imported by name
(``from mlgo_env.training.train import Trainer``); importing this package loads none of
them.
"""
