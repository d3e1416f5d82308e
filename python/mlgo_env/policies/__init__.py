"""Policies: the policy file format (policy_file.py; docs/policy-format.md) and the
Policy value and its runs (policy_runner.py), both re-exported by policy.py and both thin
wrappers over the one C++ reader, writer and runner in the package's core; and the forms
the trainer searches (margin_policy.py: clang's margin moved by a shift and a few
features; flip_classifier.py: the default except where a small network says "flip").

This layer imports numpy, the compiled core (``mlgo_env._core``, loaded at the first call
that needs it) and nothing of mlgo_env above it: no environment, no training module. Files
written here are what ``mlgo-env`` runs and what ``python -m mlgo_env.evaluate`` plays.
"""

from .policy import (DEFAULT_FEATURE, Layer, Policy, PolicyError, check_compatible,
                     load_policy, new_policy, policy_from_json, save_policy)

__all__ = ["DEFAULT_FEATURE", "Layer", "Policy", "PolicyError", "check_compatible",
           "load_policy", "new_policy", "policy_from_json", "save_policy"]
