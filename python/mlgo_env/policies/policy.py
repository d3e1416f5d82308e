"""Small neural policies stored as JSON files that any tool can run.

File format (``"format": "mlgo-env-policy"``, ``"version"`` 1, 2 or 3)::

    {
      "format": "mlgo-env-policy", "version": 2,
      "problem": "inlining",
      "features": ["threshold", "cost_estimate", "callee_users", ...],
      "transforms": ["identity", "identity", "signed-log1p", ...],   # version 2
      "margin": {"plus": "threshold", "floor": 1, "minus": "cost_estimate",  # version 2,
                 "anchor": "inlining_default", "epsilon": 0.5},             # optional
      "mean": [...], "std": [...],            # one per feature, after the transform
      "layers": [                             # applied in order
        {"weights": [[...], ...],             # shape [inputs][outputs]
         "bias": [...], "activation": "tanh"},
        {"weights": [[...]], "bias": [...], "activation": "linear"}
      ],
      "decision": "logit>0",                  # or "flip-default-if-logit>0"
      "metadata": {...}                       # free-form: how it was trained
    }

Running it: take the named features (each a one-element tensor of the observation;
``inlining_default`` may instead come from ``info["default_action"]``), transform each
value ``v`` by its feature's transform (``"signed-log1p"``: ``sign(v) * log(1 + |v|)``;
``"identity"``: ``v``), standardise with ``(t - mean) / std``, apply the layers
(``x @ weights + bias`` then the activation), and answer 1 (inline) when the single
output is above 0, else 0.

``"decision": "flip-default-if-logit>0"`` (version 2; the features must include
``inlining_default``) makes the network a *flip classifier*: the answer is the default's
decision, flipped where the logit is above 0 (``default XOR (logit > 0)``). The trainer's
classifier policies (:mod:`mlgo_env.policies.flip_classifier`) are of this form: a logit far below
0 everywhere is exactly the default.

With a ``"margin"`` block, the first layer has one more input row, first: the margin
``m = max(plus, floor) - minus`` of the raw features named (clang's own test is
``cost < max(1, threshold)``), and, when ``"anchor"`` names a 0/1 feature (the default's
decision), ``m`` clamped to the anchor's side of the boundary: ``max(m, epsilon)`` where
the anchor is 1, ``min(m, -epsilon)`` where it is 0. So ``m > 0`` is exactly the anchor's
decision, and a bias of ``+b`` inlines every call site the default refused whose margin is
above ``-b`` (and symmetrically for ``-b``): the boundary moves in cost units.

Version 1 files have one ``"transform": "signed-log1p"`` for every feature instead of the
``"transforms"`` list; they are still read, and a policy whose transforms are all
signed-log1p and that has no margin block is still written as version 1. The trainer's
policies are version 2: a linear layer over the (anchored) margin and a few signed-log1p
standardised shape features; see :mod:`mlgo_env.policies.margin_policy`.

Version 3 adds the register-allocation (eviction) form, ``"problem": "regalloc"``::

    {
      "format": "mlgo-env-policy", "version": 3,
      "problem": "regalloc",
      "features": ["mask", "weighed_reads_by_max", "use_def_density", "progress", ...],
      "transforms": [...], "mean": [...], "std": [...], "layers": [...],   # as above
      "decision": "argmax-masked",
      "mask": "mask"                          # the feature saying which candidates may go
    }

clang asks which of 33 candidates to evict (index 32 = the live range being allocated:
evict nothing); most of its features are ``[1, 33]`` tensors, one value per candidate.
The policy is a *per-candidate scoring network*: candidate ``i``'s row holds, for each
named feature, its value ``i`` when the feature has one value per candidate, or its
single value when it has one (``progress``). Each row goes through the transforms,
standardisation and layers above to one logit. The answer is the candidate with
``mask[i] == 1`` whose logit is largest; a NaN logit counts as -infinity and ties go to
the lower index. One feature is the host's, not clang's: ``"host-emulation-v2"`` (the
name of the host's emulation of clang's default eviction advisor, version included) is 1
for the candidate that emulation evicts and 0 for the others; a policy naming it can
keep the emulation's choice and learn where to depart from it (Python takes it from
``info["default_action"]``, the C++ runner computes it from the observation). Index 32
competes like any other candidate: clang clears ``mask[32]`` when it must evict something
(answering 32 then fails the compile), so the mask decides it too; when no candidate is
allowed, the answer is the last index. There is no margin block in this form. Inlining
policies stay versions 1 and 2; both versions are read.

Running a policy (:meth:`Policy.act`, and the C++ runner of ``mlgo-env launch`` and
``mlgo-env trace --policy``, ``include/mlgo/policy/policy.h``) is specified to the bit, so
both take identical decisions: IEEE double throughout; a feature value is its tensor
element converted to double; ``signed-log1p`` and ``tanh`` are the C library's
(``math.log1p``, ``math.tanh``); standardisation is ``(t - mean) / std``; each layer output
starts at 0.0, adds ``input[k] * weights[k][o]`` for ``k`` in order, then the bias; ``relu``
keeps NaN. The batch methods used for training (:meth:`Policy.logits`,
:meth:`Policy.decisions`) use numpy's vectorised functions, which may differ from the C
library in the last bit; a logit within a few units in the last place of 0 may then
decide differently there.

Loading checks everything and raises :class:`PolicyError` naming what is wrong; nothing
here writes files except :func:`save_policy`, which writes atomically.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

FORMAT = "mlgo-env-policy"
#: the newest version written and read (1 and 2 are still read, and written when enough)
VERSION = 3
#: the problems a policy file can be for
PROBLEMS = ("inlining", "regalloc")
#: the per-feature transforms a policy may use
TRANSFORMS = ("signed-log1p", "identity")
ACTIVATIONS = ("tanh", "relu", "linear")
#: how the logit becomes the decision
DECISIONS = ("logit>0", "flip-default-if-logit>0", "argmax-masked")
#: the decisions each version knows
VERSION_DECISIONS = {1: DECISIONS[:1], 2: DECISIONS[:2], 3: DECISIONS}
#: the feature holding the problem's own default decision (0/1) for inlining
DEFAULT_FEATURE = "inlining_default"
#: regalloc: the per-candidate feature that is 1 where the host's emulation of clang's
#: default eviction evicts (the emulation's versioned name: include/mlgo/policy/
#: default_eviction.h, kDefaultEvictionPolicyName); from ``info["default_action"]``
EMULATION_FEATURE = "host-emulation-v2"


class PolicyError(ValueError):
    """A policy file or policy use that cannot work; the message names the problem."""


def transform(values: np.ndarray) -> np.ndarray:
    """The default feature transform: sign(v) * log1p(|v|) (features span many decades)."""
    values = np.asarray(values, dtype=np.float64)
    return np.sign(values) * np.log1p(np.abs(values))


def apply_transforms(rows: np.ndarray, transforms: Sequence[str] | None) -> np.ndarray:
    """Each column of raw rows [n, features] through its transform (None: all log1p)."""
    rows = np.asarray(rows, dtype=np.float64)
    if transforms is None:
        return transform(rows)
    identity = np.asarray([t == "identity" for t in transforms], dtype=bool)
    return np.where(identity, rows, transform(rows))


def margin_column(rows: np.ndarray, features: Sequence[str], spec: Mapping[str, Any]
                  ) -> np.ndarray:
    """The margin input of a policy with a "margin" block, for raw rows [n, features]."""
    col = {f: i for i, f in enumerate(features)}
    rows = np.asarray(rows, dtype=np.float64)
    m = np.maximum(rows[:, col[spec["plus"]]], spec["floor"]) - rows[:, col[spec["minus"]]]
    if spec.get("anchor"):
        eps = spec["epsilon"]
        m = np.where(rows[:, col[spec["anchor"]]] > 0.5, np.maximum(m, eps), np.minimum(m, -eps))
    return m


def feature_row(observation: Mapping[str, Any], info: Mapping[str, Any] | None,
                names: Sequence[str]) -> np.ndarray:
    """The raw row of one-element features `names` of one observation, float64;
    ``inlining_default`` comes from ``info["default_action"]`` when the observation does
    not show it. Raises PolicyError for a missing or multi-valued feature."""
    row = np.empty(len(names), dtype=np.float64)
    for i, name in enumerate(names):
        if name in observation:
            value = np.asarray(observation[name]).reshape(-1)
            if value.size != 1:
                raise PolicyError(f"feature '{name}' has {value.size} values; policies "
                                  "use one-element features only")
            row[i] = float(value[0])
        elif name == DEFAULT_FEATURE and info is not None and "default_action" in info:
            row[i] = float(info["default_action"])
        else:
            raise PolicyError(f"the observation has no feature '{name}' that the policy "
                              "expects")
    return row


@dataclass
class Layer:
    weights: np.ndarray  # [inputs, outputs]
    bias: np.ndarray     # [outputs]
    activation: str


@dataclass
class Policy:
    """A feed-forward policy over scalar features, deciding by the sign of one logit."""

    problem: str
    features: list[str]
    mean: np.ndarray
    std: np.ndarray
    layers: list[Layer]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: one of TRANSFORMS per feature; None means signed-log1p for every feature
    transforms: list[str] | None = None
    #: the margin block (see the module doc), or None
    margin: dict[str, Any] | None = None
    #: one of DECISIONS
    decision: str = "logit>0"
    #: regalloc ("argmax-masked"): the feature holding the candidates' mask
    mask: str | None = None

    # -- evaluation ------------------------------------------------------------------
    def features_of(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None
                    ) -> np.ndarray:
        """The raw feature row for one observation (before the transform)."""
        return feature_row(observation, info, self.features)

    def logits(self, rows: np.ndarray) -> np.ndarray:
        """Logits for raw feature rows of shape [n, features]."""
        x = (apply_transforms(rows, self.transforms) - self.mean) / self.std
        if self.margin is not None:
            x = np.column_stack([margin_column(rows, self.features, self.margin), x])
        return forward(self.layers, x)

    def logits_by_name(self, names: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """Logits for raw rows whose columns are the features `names` (a superset of the
        policy's, in any order), e.g. a trace's rows."""
        where = {n: i for i, n in enumerate(names)}
        missing = [f for f in self.features if f not in where]
        if missing:
            raise PolicyError(f"the rows lack feature(s) {', '.join(missing)}")
        return self.logits(np.asarray(rows)[:, [where[f] for f in self.features]])

    def decisions(self, rows: np.ndarray) -> np.ndarray:
        """The 0/1 decisions (int8) for raw feature rows [n, features]: logit > 0, or, for a
        flip classifier, the default's decision XOR logit > 0."""
        if self.decision == "argmax-masked":
            raise PolicyError("a regalloc policy decides per observation (act), not per row")
        rows = np.asarray(rows, dtype=np.float64)
        positive = self.logits(rows) > 0.0
        if self.decision == "flip-default-if-logit>0":
            default = rows[:, self.features.index(DEFAULT_FEATURE)] > 0.5
            positive = positive != default
        return positive.astype(np.int8)

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> int:
        """The decision for one observation, computed exactly as the C++ runner does (see the
        module doc): inlining 0/1, regalloc the index of the candidate to evict."""
        if self.decision == "argmax-masked":
            rows, mask = self.candidate_rows(observation, info)
            allowed = np.flatnonzero(mask == 1)
            if allowed.size == 0:
                return int(mask.size - 1)
            logits = self.exact_logits(rows)[allowed]
            return int(allowed[int(np.argmax(np.where(np.isnan(logits), -np.inf, logits)))])
        row = self.features_of(observation, info)[None, :]
        positive = bool(self.exact_logits(row)[0] > 0.0)
        if self.decision == "flip-default-if-logit>0":
            positive = positive != bool(row[0, self.features.index(DEFAULT_FEATURE)] > 0.5)
        return int(positive)

    def candidate_rows(self, observation: Mapping[str, Any],
                       info: Mapping[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A regalloc policy's raw rows [candidates, features] for one observation, and the
        mask [candidates]; PolicyError when a feature is missing or has another size. The
        EMULATION_FEATURE column comes from ``info["default_action"]``."""
        name = self.mask or "mask"
        if name not in observation:
            raise PolicyError(f"the observation has no feature '{name}' that the policy expects")
        mask = np.asarray(observation[name]).reshape(-1)
        rows = np.empty((mask.size, len(self.features)), dtype=np.float64)
        for i, feature in enumerate(self.features):
            if feature == EMULATION_FEATURE and feature not in observation:
                rows[:, i] = emulation_column(mask.size, info)
                continue
            if feature not in observation:
                raise PolicyError(f"the observation has no feature '{feature}' that the policy "
                                  "expects")
            value = np.asarray(observation[feature]).reshape(-1)
            if value.size not in (1, mask.size):
                raise PolicyError(f"feature '{feature}' has {value.size} values; regalloc "
                                  f"policies use features with one value per candidate "
                                  f"({mask.size}) or one value")
            rows[:, i] = value.astype(np.float64)
        return rows, mask

    def exact_logits(self, rows: np.ndarray) -> np.ndarray:
        """Logits for raw rows [n, features] with the specified arithmetic (module doc): the C
        library's log1p and tanh, layer sums in input order. What `act` and the C++ runner
        use; slower than `logits`."""
        rows = np.asarray(rows, dtype=np.float64)
        t = rows.copy()
        for j, name in enumerate(self.transforms or ["signed-log1p"] * len(self.features)):
            if name == "signed-log1p":
                t[:, j] = np.sign(rows[:, j]) * _libm(math.log1p, np.abs(rows[:, j]))
        x = (t - self.mean) / self.std
        if self.margin is not None:
            x = np.column_stack([margin_column(rows, self.features, self.margin), x])
        for l in self.layers:
            acc = np.zeros((x.shape[0], l.weights.shape[1]))
            for k in range(l.weights.shape[0]):
                acc = acc + x[:, k:k + 1] * l.weights[k]
            acc = acc + l.bias
            if l.activation == "tanh":
                acc = _libm(math.tanh, acc)
            elif l.activation == "relu":
                acc = np.maximum(acc, 0.0)
            x = acc
        return x[:, 0]

    # -- parameters as one flat vector (for evolution strategies) ----------------------
    def flat(self) -> np.ndarray:
        return np.concatenate([np.concatenate([l.weights.ravel(), l.bias.ravel()])
                               for l in self.layers])

    def with_flat(self, vector: np.ndarray) -> "Policy":
        vector = np.asarray(vector, dtype=np.float64)
        layers, at = [], 0
        for l in self.layers:
            w = vector[at:at + l.weights.size].reshape(l.weights.shape)
            at += l.weights.size
            b = vector[at:at + l.bias.size].reshape(l.bias.shape)
            at += l.bias.size
            layers.append(Layer(w.copy(), b.copy(), l.activation))
        if at != vector.size:
            raise PolicyError(f"parameter vector has {vector.size} values, policy needs {at}")
        return Policy(self.problem, list(self.features), self.mean.copy(), self.std.copy(),
                      layers, dict(self.metadata),
                      None if self.transforms is None else list(self.transforms),
                      None if self.margin is None else dict(self.margin), self.decision,
                      self.mask)

    # -- JSON ---------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The file's JSON: version 1 when every transform is signed-log1p, else 2; version 3
        for the regalloc form."""
        if self.margin is None and self.decision == "logit>0" and (self.transforms is None
                                    or all(t == "signed-log1p" for t in self.transforms)):
            head: dict[str, Any] = {"version": 1, "transform": "signed-log1p"}
        else:
            head = {"version": 3 if self.decision == "argmax-masked" else 2,
                    "transforms": list(self.transforms or ["signed-log1p"] * len(self.features))}
            if self.margin is not None:
                head["margin"] = dict(self.margin)
            if self.decision == "argmax-masked":
                head["mask"] = self.mask or "mask"
        return {
            "format": FORMAT, "version": head["version"], "problem": self.problem,
            "features": list(self.features),
            **{k: v for k, v in head.items() if k != "version"},
            "mean": self.mean.tolist(), "std": self.std.tolist(),
            "layers": [{"weights": l.weights.tolist(), "bias": l.bias.tolist(),
                        "activation": l.activation} for l in self.layers],
            "decision": self.decision, "metadata": self.metadata,
        }


def emulation_column(candidates: int, info: Mapping[str, Any] | None) -> np.ndarray:
    """The EMULATION_FEATURE column: 1.0 at ``info["default_action"]``, else 0.0."""
    if info is None or "default_action" not in info:
        raise PolicyError(f"the policy expects feature '{EMULATION_FEATURE}', which comes "
                          "from info['default_action'], and the step has none")
    column = np.zeros(candidates)
    at = int(info["default_action"])
    if 0 <= at < candidates:
        column[at] = 1.0
    return column


def _libm(func: Any, values: np.ndarray) -> np.ndarray:
    """`func` (math.log1p, math.tanh: the C library's) applied to every element."""
    flat = np.asarray(values, dtype=np.float64).ravel().tolist()
    return np.fromiter(map(func, flat), dtype=np.float64, count=len(flat)).reshape(
        np.shape(values))


def forward(layers: Sequence[Layer], x: np.ndarray) -> np.ndarray:
    """Applies the layers to standardised inputs [n, features]; returns logits [n]."""
    for l in layers:
        x = x @ l.weights + l.bias
        if l.activation == "tanh":
            x = np.tanh(x)
        elif l.activation == "relu":
            x = np.maximum(x, 0.0)
    return x[:, 0]


def new_policy(problem: str, features: Sequence[str], mean: np.ndarray, std: np.ndarray,
               hidden: int, rng: np.random.Generator) -> Policy:
    """A freshly initialised policy (one tanh hidden layer of `hidden` units, or linear)."""
    n = len(features)
    mean, std = np.asarray(mean, float), np.asarray(std, float)
    layers = []
    if hidden > 0:
        w1 = rng.normal(0.0, 0.1 / math.sqrt(n), (n, hidden))
        b1 = np.zeros(hidden)
        w2 = rng.normal(0.0, 0.1 / math.sqrt(hidden), (hidden, 1))
        layers = [Layer(w1, b1, "tanh"), Layer(w2, np.zeros(1), "linear")]
    else:
        layers = [Layer(np.zeros((n, 1)), np.zeros(1), "linear")]
    if DEFAULT_FEATURE in features:
        # Start as the problem's default: the logit follows the standardised default
        # decision (hidden unit 0 when there is a hidden layer); learning adds the rest.
        i = features.index(DEFAULT_FEATURE)
        on, off = (transform(np.array([1.0, 0.0])) - mean[i]) / std[i]
        scale, mid = 6.0 / max(on - off, 1e-6), (on + off) / 2
        first = layers[0]
        first.weights[:, 0] = 0.0
        first.weights[i, 0] = scale
        first.bias[0] = -scale * mid
        if hidden > 0:
            layers[1].weights[0, 0] = 4.0
    return Policy(problem, list(features), mean, std, layers)


def _number_list(obj: Any, where: str, length: int | None = None) -> np.ndarray:
    if not isinstance(obj, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj):
        raise PolicyError(f"{where} must be a list of numbers")
    arr = np.asarray(obj, dtype=np.float64)
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
    if version not in VERSION_DECISIONS or isinstance(version, bool):
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
    raw_layers = obj.get("layers")
    if not isinstance(raw_layers, list) or not raw_layers:
        raise PolicyError(f"{where}: 'layers' must be a non-empty list")
    layers, inputs = [], n + (margin is not None)
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
        if (not isinstance(value, (int, float)) or isinstance(value, bool)
                or not math.isfinite(value) or (key == "epsilon" and value < 0)):
            raise PolicyError(f"{where}: 'margin' {key} must be a finite number")
        out[key] = float(value)
    return out


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


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Reads and validates a policy file; PolicyError names the file and the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except OSError as e:
        raise PolicyError(f"cannot read policy '{path}': {e.strerror}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
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
    """Writes the policy as JSON atomically (a temporary beside `path`, then rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".policy-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(policy.to_json(), f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
