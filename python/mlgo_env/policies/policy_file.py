"""The policy file format: reading, validating and writing ``"mlgo-env-policy"`` files.

docs/policy-format.md specifies the format (versions 1 to 3, every field, units) and lists
each refusal with its message; tests/data/policies/ holds golden valid and invalid files that
this reader and the C++ one (``include/mlgo/policy/policy_file.h``) are both tested against.
The checks run in the order below, the C++ reader's order, so both refuse a file with the
same first complaint. Running a policy is :mod:`mlgo_env.policies.policy_runner`.

Everything raises :class:`PolicyError` naming what is wrong; nothing here writes files
except :func:`save_policy`, which writes atomically. Reading blocks on the file only.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Sequence

import numpy as np

from .policy_runner import (ACTIVATIONS, DECISIONS, DEFAULT_FEATURE, TRANSFORMS, Layer, Policy,
                            PolicyError)

FORMAT = "mlgo-env-policy"
#: the newest version written and read (1 and 2 are still read, and written when enough)
VERSION = 3
#: the problems a policy file can be for
PROBLEMS = ("inlining", "regalloc")
#: the decisions each version knows
VERSION_DECISIONS = {1: DECISIONS[:1], 2: DECISIONS[:2], 3: DECISIONS}
#: files larger than this are refused before reading (the C++ reader's kMaxPolicyFileBytes)
MAX_FILE_BYTES = 64 << 20


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(value: int | float) -> float:
    """A JSON number as a double; an integer beyond the double range is infinite (as
    strtod, the C++ reader's, makes it), not an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number_list(obj: Any, where: str, length: int | None = None) -> np.ndarray:
    if not isinstance(obj, list) or not all(_is_number(v) for v in obj):
        raise PolicyError(f"{where} must be a list of numbers")
    arr = np.asarray([_as_float(v) for v in obj], dtype=np.float64)
    if length is not None and arr.size != length:
        raise PolicyError(f"{where} has {arr.size} values, expected {length}")
    if not np.all(np.isfinite(arr)):
        raise PolicyError(f"{where} holds a value that is not finite")
    return arr


def policy_from_json(obj: Any, where: str = "policy") -> Policy:
    """Validates and builds a Policy from parsed JSON; PolicyError names the problem."""
    if not isinstance(obj, dict):
        raise PolicyError(f"{where}: not a JSON object")
    if obj.get("format") != FORMAT:
        raise PolicyError(f"{where}: 'format' is {obj.get('format')!r}, expected {FORMAT!r}")
    version = obj.get("version")
    if not _is_number(version) or version not in VERSION_DECISIONS:
        raise PolicyError(f"{where}: version {version!r} is not supported "
                          f"(this reader knows 1, 2 and {VERSION})")
    version = int(version)
    problem = obj.get("problem")
    if not isinstance(problem, str) or not problem:
        raise PolicyError(f"{where}: 'problem' must name the problem")
    if problem not in PROBLEMS:
        raise PolicyError(f"{where}: problem '{problem}' has no policy form (policies are for "
                          f"{' or '.join(PROBLEMS)})")
    features = obj.get("features")
    if (not isinstance(features, list) or not features
            or not all(isinstance(f, str) and f for f in features)):
        raise PolicyError(f"{where}: 'features' must be a non-empty list of names")
    if len(set(features)) != len(features):
        raise PolicyError(f"{where}: 'features' names a feature twice")
    n = len(features)
    transforms = _transforms(obj, version, n, where)
    margin = _margin(obj, features, where) if version >= 2 else None
    if margin is not None and problem != "inlining":
        raise PolicyError(f"{where}: 'margin' is for inlining policies")
    mean = _number_list(obj.get("mean"), f"{where}: 'mean'", n)
    std = _number_list(obj.get("std"), f"{where}: 'std'", n)
    if np.any(std <= 0):
        raise PolicyError(f"{where}: 'std' must be positive")
    layers = _layers(obj, n + (margin is not None), margin is not None, where)
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise PolicyError(f"{where}: 'metadata' must be an object")
    decision = obj.get("decision", "logit>0")
    if decision not in VERSION_DECISIONS[version]:
        raise PolicyError(f"{where}: decision {decision!r} is not one of "
                          f"{', '.join(VERSION_DECISIONS[version])}")
    if decision == "flip-default-if-logit>0" and DEFAULT_FEATURE not in features:
        raise PolicyError(f"{where}: decision {decision!r} needs the feature "
                          f"'{DEFAULT_FEATURE}' among the features")
    mask = _candidate_form(obj, problem, decision, where)
    return Policy(problem, list(features), mean, std, layers, metadata, transforms, margin,
                  decision, mask)


def _transforms(obj: dict[str, Any], version: int, n: int, where: str) -> list[str] | None:
    """The per-feature transforms of a file (None: version 1's signed-log1p for all)."""
    if version == 1:
        if obj.get("transform", "signed-log1p") != "signed-log1p":
            raise PolicyError(f"{where}: unknown transform {obj.get('transform')!r}")
        return None
    transforms = obj.get("transforms")
    if not isinstance(transforms, list) or len(transforms) != n:
        raise PolicyError(f"{where}: 'transforms' must list one transform per feature ({n})")
    unknown = [t for t in transforms if t not in TRANSFORMS]
    if unknown:
        raise PolicyError(f"{where}: unknown transform {unknown[0]!r} (known: "
                          f"{', '.join(TRANSFORMS)})")
    return list(transforms)


def _margin(obj: dict[str, Any], features: list[str], where: str) -> dict[str, Any] | None:
    """The validated margin block of a version-2 (or later) file, or None."""
    spec = obj.get("margin")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise PolicyError(f"{where}: 'margin' must be an object")
    out: dict[str, Any] = {}
    for key in ("plus", "minus", "anchor"):
        name = spec.get(key)
        if key == "anchor" and name is None:
            continue
        if name not in features:
            raise PolicyError(f"{where}: 'margin' {key} {name!r} is not one of the features")
        out[key] = name
    for key, default in (("floor", None), ("epsilon", 0.5)):
        value = spec.get(key, default)
        if (not _is_number(value) or not math.isfinite(_as_float(value))
                or (key == "epsilon" and value < 0)):
            raise PolicyError(f"{where}: 'margin' {key} must be a finite number")
        out[key] = float(value)
    return out


def _layers(obj: dict[str, Any], inputs: int, margin: bool, where: str) -> list[Layer]:
    """The validated layers: each takes the previous one's outputs, the last gives 1 logit."""
    raw_layers = obj.get("layers")
    if not isinstance(raw_layers, list) or not raw_layers:
        raise PolicyError(f"{where}: 'layers' must be a non-empty list")
    layers = []
    for i, raw in enumerate(raw_layers):
        lw = f"{where}: layer {i}"
        if not isinstance(raw, dict):
            raise PolicyError(f"{lw}: not an object")
        rows = raw.get("weights")
        if not isinstance(rows, list) or len(rows) != inputs:
            raise PolicyError(f"{lw}: 'weights' must have {inputs} rows (one per input"
                              f"{', the margin first' if i == 0 and margin else ''})")
        outputs = len(rows[0]) if rows and isinstance(rows[0], list) else 0
        if outputs == 0:
            raise PolicyError(f"{lw}: 'weights' rows must be non-empty lists")
        w = np.stack([_number_list(r, f"{lw}: 'weights' row {j}", outputs)
                      for j, r in enumerate(rows)])
        b = _number_list(raw.get("bias"), f"{lw}: 'bias'", outputs)
        act = raw.get("activation")
        if act not in ACTIVATIONS:
            raise PolicyError(f"{lw}: activation {act!r} is not one of {', '.join(ACTIVATIONS)}")
        layers.append(Layer(w, b, act))
        inputs = outputs
    if inputs != 1:
        raise PolicyError(f"{where}: the last layer has {inputs} outputs, expected 1 logit")
    return layers


def _candidate_form(obj: dict[str, Any], problem: str, decision: str, where: str) -> str | None:
    """Checks that regalloc and "argmax-masked" go together; the mask feature's name."""
    candidates = decision == "argmax-masked"
    if candidates and problem != "regalloc":
        raise PolicyError(f"{where}: decision 'argmax-masked' is for problem 'regalloc', "
                          f"not '{problem}'")
    if problem == "regalloc" and not candidates:
        raise PolicyError(f"{where}: problem 'regalloc' policies decide with 'argmax-masked' "
                          f"(version 3), not {decision!r}")
    if not candidates:
        return None
    mask = obj.get("mask", "mask")
    if not isinstance(mask, str) or not mask:
        raise PolicyError(f"{where}: 'mask' must name the mask feature")
    return mask


def policy_to_json(policy: Policy) -> dict[str, Any]:
    """The file's JSON: version 1 when every transform is signed-log1p (and there is no
    margin or other decision), version 3 for the regalloc form, else 2."""
    if policy.margin is None and policy.decision == "logit>0" and (policy.transforms is None
                                    or all(t == "signed-log1p" for t in policy.transforms)):
        head: dict[str, Any] = {"version": 1, "transform": "signed-log1p"}
    else:
        head = {"version": 3 if policy.decision == "argmax-masked" else 2,
                "transforms": list(policy.transforms or ["signed-log1p"] * len(policy.features))}
        if policy.margin is not None:
            head["margin"] = dict(policy.margin)
        if policy.decision == "argmax-masked":
            head["mask"] = policy.mask or "mask"
    return {
        "format": FORMAT, "version": head["version"], "problem": policy.problem,
        "features": list(policy.features),
        **{k: v for k, v in head.items() if k != "version"},
        "mean": policy.mean.tolist(), "std": policy.std.tolist(),
        "layers": [{"weights": l.weights.tolist(), "bias": l.bias.tolist(),
                    "activation": l.activation} for l in policy.layers],
        "decision": policy.decision, "metadata": policy.metadata,
    }


def _refuse_constant(name: str) -> Any:
    """json's hook for NaN, Infinity and -Infinity, which JSON does not have (Python's json
    reads them; the C++ reader, like any strict one, does not)."""
    raise ValueError(f"{name} is not a JSON value")


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Reads and validates a policy file; PolicyError names the file and the problem."""
    try:
        if os.stat(path).st_size > MAX_FILE_BYTES:
            raise PolicyError(f"policy '{path}' is larger than {MAX_FILE_BYTES >> 20} MiB")
        with open(path, encoding="utf-8") as f:
            obj = json.load(f, parse_constant=_refuse_constant)
    except OSError as e:
        raise PolicyError(f"cannot read policy '{path}': {e.strerror}") from e
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        raise PolicyError(f"policy '{path}' is not valid JSON: {e}") from e
    return policy_from_json(obj, f"policy '{path}'")


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
    """Writes the policy as JSON atomically (a temporary beside `path`, then rename). Refuses
    (PolicyError, nothing written) a policy that the readers would refuse: a non-finite
    parameter, a metadata value that JSON cannot hold, a shape that does not chain."""
    obj = policy_to_json(policy)
    policy_from_json(obj, f"policy '{path}' (not written)")
    try:
        text = json.dumps(obj, indent=1, allow_nan=False)
    except ValueError as e:
        raise PolicyError(f"policy '{path}' (not written): {e}") from e
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".policy-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
