"""Small neural policies stored as JSON files that any tool can run.

The policy layer in two modules, re-exported here under the names they always had
(``from mlgo_env.policies.policy import Policy, load_policy`` keeps working):

- :mod:`~mlgo_env.policies.policy_file`: the file format (``"format": "mlgo-env-policy"``,
  versions 1 to 3): :func:`load_policy`, :func:`policy_from_json`, :func:`save_policy`,
  :func:`check_compatible`. The format is specified in docs/policy-format.md, with every
  refusal and its message; tests/data/policies/ holds golden files that this reader and the
  C++ one are both tested against.
- :mod:`~mlgo_env.policies.policy_runner`: the :class:`Policy` value and how it answers an
  observation (:meth:`Policy.act`, bit-identical to the C++ runner of ``mlgo-env launch``)
  or a batch of rows (:meth:`Policy.logits`, :meth:`Policy.decisions`), and
  :func:`new_policy`.
"""

from __future__ import annotations

from .policy_file import (FORMAT, MAX_FILE_BYTES, PROBLEMS, VERSION, VERSION_DECISIONS,
                          check_compatible, load_policy, policy_from_json, policy_to_json,
                          save_policy)
from .policy_runner import (ACTIVATIONS, DECISIONS, DEFAULT_FEATURE, EMULATION_FEATURE,
                            TRANSFORMS, Layer, Policy, PolicyError, apply_transforms,
                            emulation_column, feature_row, forward, margin_column, new_policy,
                            transform)

__all__ = [
    "ACTIVATIONS", "DECISIONS", "DEFAULT_FEATURE", "EMULATION_FEATURE", "FORMAT",
    "MAX_FILE_BYTES", "PROBLEMS", "TRANSFORMS", "VERSION", "VERSION_DECISIONS", "Layer",
    "Policy", "PolicyError", "apply_transforms", "check_compatible", "emulation_column",
    "feature_row", "forward", "load_policy", "margin_column", "new_policy", "policy_from_json",
    "policy_to_json", "save_policy", "transform",
]
