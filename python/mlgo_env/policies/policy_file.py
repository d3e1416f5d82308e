"""The policy file format: reading, validating and writing ``"mlgo-env-policy"`` files.

The reader, validator and writer are the C++ ones (``include/mlgo/policy/policy_file.h``),
called through the package's compiled core (``mlgo_env._core``): the files this module
accepts, refuses (and the words it refuses them in) and writes are those of ``mlgo-env
launch``. docs/policy-format.md specifies the format (versions 1 to 3, every field, units)
and lists each refusal with its message; tests/data/policies/ holds the golden files.
Running a policy is :mod:`mlgo_env.policies.policy_runner`.

Everything raises :class:`PolicyError` naming what is wrong (ImportError when the core is
not built); nothing here writes files except :func:`save_policy`, which writes atomically.
Reading blocks on the file only.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

from .._native import load_core
from ..files import write_atomic
from .policy_runner import Layer, Policy, PolicyError, core_policy, policy_errors


def _policy_of(core: Any, metadata: dict[str, Any] | None = None) -> Policy:
    """The Policy value of a core policy (its metadata parsed unless given)."""
    f = core.fields()
    return Policy(f["problem"], f["features"], f["mean"], f["std"],
                  [Layer(w, b, a) for w, b, a in f["layers"]],
                  json.loads(f["metadata_json"]) if metadata is None else metadata,
                  f["transforms"], f["margin"], f["decision"], f["mask"])


def policy_from_json(obj: Any, where: str = "policy") -> Policy:
    """Validates and builds a Policy from parsed JSON (as json.load gives it); PolicyError
    names the problem, prefixed with `where`. The metadata is `obj`'s own object."""
    with policy_errors():
        core = load_core().Policy.from_json(obj, where)
    return _policy_of(core, obj.get("metadata", {}))


def policy_to_json(policy: Policy) -> dict[str, Any]:
    """The file's JSON as json.load reads it back: the oldest version that holds the
    policy (1 when every transform is signed-log1p, there is no margin and the decision is
    logit>0; 3 for the regalloc form; else 2). PolicyError when the policy is invalid."""
    core = core_policy(policy, metadata=True)
    with policy_errors():
        return json.loads(core.text())


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Reads and validates a policy file; PolicyError names the file and the problem."""
    with policy_errors():
        core = load_core().Policy.load(os.fspath(path))
    return _policy_of(core)


def check_compatible(policy: Policy, problem: str, available: Sequence[str]) -> None:
    """Raises PolicyError unless the policy is for `problem` and every feature it expects is
    among `available` (the environment's observation features, plus the host's: inlining_default
    or EMULATION_FEATURE)."""
    if policy.problem != problem:
        raise PolicyError(f"the policy is for problem '{policy.problem}', not '{problem}'")
    needed = policy.features + ([policy.mask] if policy.mask else [])
    missing = [f for f in dict.fromkeys(needed) if f not in set(available)]
    if missing:
        raise PolicyError(f"the policy expects feature(s) {', '.join(missing)} that the "
                          f"'{problem}' environment does not provide")


def save_policy(policy: Policy, path: str | os.PathLike[str]) -> None:
    """Writes the policy's file atomically (a temporary beside `path`, then rename).
    Refuses (PolicyError ``policy 'PATH' (not written): ...``, nothing written) a policy
    the reader would refuse, and NaN or an infinity in its metadata."""
    core = core_policy(policy, f"policy '{os.fspath(path)}' (not written)", metadata=True)
    with policy_errors():
        text = core.text()
    write_atomic(os.fspath(path), text)
