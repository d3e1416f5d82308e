"""Small neural policies stored as JSON files that any tool can run.

The policy layer in two modules, re-exported here under the names they always had
(``from mlgo_env.policies.policy import Policy, load_policy`` keeps working), both thin
wrappers over the one C++ implementation in the package's core:

- :mod:`~mlgo_env.policies.policy_file`: the file format (``"format": "mlgo-env-policy"``,
  versions 1 to 3): :func:`load_policy`, :func:`policy_from_json`, :func:`policy_to_json`,
  :func:`save_policy`, :func:`check_compatible`. The format is specified in
  docs/policy-format.md, with every refusal and its message; tests/data/policies/ holds the
  golden files.
- :mod:`~mlgo_env.policies.policy_runner`: the :class:`Policy` value and how it answers an
  observation (:meth:`Policy.act`, what ``mlgo-env launch`` answers) or a batch of rows
  (:meth:`Policy.logits`, :meth:`Policy.decisions`), and :func:`new_policy`.
"""

from __future__ import annotations

from .policy_file import (check_compatible, load_policy, policy_from_json, policy_to_json,
                          save_policy)
from .policy_runner import (DEFAULT_FEATURE, EMULATION_FEATURE, Layer, Policy, PolicyError,
                            feature_row, margin_column, new_policy, transform)

__all__ = [
    "DEFAULT_FEATURE", "EMULATION_FEATURE", "Layer", "Policy", "PolicyError",
    "check_compatible", "feature_row", "load_policy", "margin_column", "new_policy",
    "policy_from_json", "policy_to_json", "save_policy", "transform",
]
