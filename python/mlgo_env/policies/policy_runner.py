"""How a policy answers: the :class:`Policy` value and its arithmetic.

A policy is a feed-forward network over named features of an observation
(docs/policy-format.md, "Running a policy"; the file format itself, reading and writing, is
:mod:`mlgo_env.policies.policy_file`). Two paths compute its logits:

- :meth:`Policy.act` (one observation) and :meth:`Policy.exact_logits` follow the specified
  arithmetic to the bit, as the C++ runner (``include/mlgo/policy/policy_runner.h``) does, so
  both take identical decisions: IEEE double throughout; a feature value is its tensor element
  converted to double; ``signed-log1p`` and ``tanh`` are the C library's (``math.log1p``,
  ``math.tanh``); standardisation is ``(t - mean) / std``; each layer output starts at 0.0,
  adds ``input[k] * weights[k][o]`` for ``k`` in order, then the bias; ``relu`` keeps NaN.
- :meth:`Policy.logits` and :meth:`Policy.decisions` (batches, for training) use numpy's
  vectorised functions, which may differ from the C library in the last bit: a logit within a
  few units in the last place of 0 may then decide differently there.

Nothing here reads or writes files, and nothing blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

#: the per-feature transforms a policy may use
TRANSFORMS = ("signed-log1p", "identity")
ACTIVATIONS = ("tanh", "relu", "linear")
#: how the logit becomes the decision
DECISIONS = ("logit>0", "flip-default-if-logit>0", "argmax-masked")
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


@dataclass
class Layer:
    weights: np.ndarray  # [inputs, outputs]
    bias: np.ndarray     # [outputs]
    activation: str      # one of ACTIVATIONS


def forward(layers: Sequence[Layer], x: np.ndarray) -> np.ndarray:
    """Applies the layers to standardised inputs [n, features]; returns logits [n]."""
    for l in layers:
        x = x @ l.weights + l.bias
        if l.activation == "tanh":
            x = np.tanh(x)
        elif l.activation == "relu":
            x = np.maximum(x, 0.0)
    return x[:, 0]


def _libm(func: Any, values: np.ndarray) -> np.ndarray:
    """`func` (math.log1p, math.tanh: the C library's) applied to every element."""
    flat = np.asarray(values, dtype=np.float64).ravel().tolist()
    return np.fromiter(map(func, flat), dtype=np.float64, count=len(flat)).reshape(
        np.shape(values))


@dataclass
class Policy:
    """A feed-forward policy over scalar features, deciding by the sign of one logit (or, for
    regalloc, by the largest logit among the allowed candidates). Build one with
    :func:`new_policy`, :func:`~mlgo_env.policies.policy_file.load_policy` or
    :func:`~mlgo_env.policies.policy_file.policy_from_json`, which validate; a Policy
    constructed directly is trusted as it is."""

    problem: str
    features: list[str]
    mean: np.ndarray
    std: np.ndarray
    layers: list[Layer]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: one of TRANSFORMS per feature; None means signed-log1p for every feature
    transforms: list[str] | None = None
    #: the margin block (docs/policy-format.md), or None
    margin: dict[str, Any] | None = None
    #: one of DECISIONS
    decision: str = "logit>0"
    #: regalloc ("argmax-masked"): the feature holding the candidates' mask
    mask: str | None = None

    # -- batches (training) ------------------------------------------------------------
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

    # -- one observation, exactly as the C++ runner ----------------------------------------
    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> int:
        """The decision for one observation, computed exactly as the C++ runner does (module
        doc): inlining 0/1, regalloc the index of the candidate to evict. PolicyError when a
        feature is missing or has the wrong number of values."""
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
