"""How a policy answers: the :class:`Policy` value and the calls that run it.

A policy is a feed-forward network over named features of an observation
(docs/policy-format.md, "Running a policy"; reading and writing files is
:mod:`mlgo_env.policies.policy_file`). It has one runner, in C++
(``include/mlgo/policy/policy_runner.h``), which this module calls through the package's
compiled core (``mlgo_env._core``): :meth:`Policy.act` for one observation,
:meth:`Policy.logits` and :meth:`Policy.decisions` for batches of raw rows (training). All
follow the specified arithmetic to the bit, so training, evaluation and ``mlgo-env
launch`` decide alike.

A :class:`Policy` is a plain value (numpy arrays, lists) that the trainer builds and
changes; a call that runs it hands its current fields to the core, which validates them and
raises :class:`PolicyError` naming what is wrong. The validated copy is kept with the value
while its fields stay as they were (compared by content, so changing an array in place is
seen too). ImportError when the core is not built. Nothing here reads or writes files, and
nothing blocks.
"""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from .._native import load_core

#: the feature holding the problem's own default decision (0/1) for inlining
DEFAULT_FEATURE = "inlining_default"
#: regalloc: the per-candidate feature that is 1 where the host's emulation of clang's
#: default eviction evicts (the emulation's versioned name: include/mlgo/policy/
#: default_eviction.h, kDefaultEvictionPolicyName); from ``info["default_action"]``
EMULATION_FEATURE = "host-emulation-v2"


class PolicyError(ValueError):
    """A policy file or policy use that cannot work; the message names the problem."""


@contextlib.contextmanager
def policy_errors() -> Iterator[None]:
    """Turns the core's refusals (ValueError with the policy layer's message) into
    PolicyError."""
    try:
        yield
    except PolicyError:
        raise
    except ValueError as e:
        raise PolicyError(str(e)) from None


def core_policy(policy: "Policy", where: str = "policy", metadata: bool = False) -> Any:
    """The core's validated copy of `policy` (``_core.Policy``); `where` prefixes its
    messages, `metadata` says whether to take the metadata too (running needs none)."""
    with policy_errors():
        return load_core().Policy.of(policy, where, metadata)


def _content(value: Any) -> Any:
    """What a field holds, comparable with ==: an array's dtype, shape and bytes."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    return repr(value)


def _running_copy(policy: "Policy") -> Any:
    """The core's copy of `policy` for running it: the one kept with the value while its
    fields hold what they held when it was made, else a new one (validated)."""
    key = (policy.problem, policy.features, policy.decision, policy.mask, policy.transforms,
           policy.margin, _content(policy.mean), _content(policy.std),
           [(_content(l.weights), _content(l.bias), l.activation) for l in policy.layers])
    kept = policy.__dict__.get("_running")
    if kept is not None and kept[0] == key:
        return kept[1]
    core = core_policy(policy)
    policy.__dict__["_running"] = (copy.deepcopy(key), core)
    return core


def transform(values: np.ndarray) -> np.ndarray:
    """The default feature transform, vectorised: sign(v) * log1p(|v|) (features span many
    decades). For fitting a policy's standardisation; running one uses the core's."""
    values = np.asarray(values, dtype=np.float64)
    return np.sign(values) * np.log1p(np.abs(values))


def margin_column(rows: np.ndarray, features: Sequence[str], spec: Mapping[str, Any]
                  ) -> np.ndarray:
    """The margin input of a "margin" block, vectorised over raw rows [n, features] (for
    fitting the margin forms; running a policy uses the core's)."""
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
    activation: str      # "tanh", "relu" or "linear"


@dataclass
class Policy:
    """A feed-forward policy over scalar features, deciding by the sign of one logit (or, for
    regalloc, by the largest logit among the allowed candidates). Build one with
    :func:`new_policy`, :func:`~mlgo_env.policies.policy_file.load_policy` or
    :func:`~mlgo_env.policies.policy_file.policy_from_json`, or directly: the core validates
    its fields at every call that runs or writes it."""

    problem: str
    features: list[str]
    mean: np.ndarray
    std: np.ndarray
    layers: list[Layer]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: "signed-log1p" or "identity" per feature; None means signed-log1p for every feature
    transforms: list[str] | None = None
    #: the margin block (docs/policy-format.md), or None
    margin: dict[str, Any] | None = None
    #: "logit>0", "flip-default-if-logit>0" or "argmax-masked"
    decision: str = "logit>0"
    #: regalloc ("argmax-masked"): the feature holding the candidates' mask
    mask: str | None = None

    # -- batches (training) ------------------------------------------------------------
    def features_of(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None
                    ) -> np.ndarray:
        """The raw feature row for one observation (before the transform)."""
        return feature_row(observation, info, self.features)

    def logits(self, rows: np.ndarray) -> np.ndarray:
        """Logits for raw feature rows of shape [n, features] (float64, the runner's
        arithmetic: a row's logit is what `act` computes for its observation)."""
        core = _running_copy(self)
        with policy_errors():
            return core.logits(rows)

    #: the same as `logits` (once a slower twin that followed the runner to the bit)
    exact_logits = logits

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
        flip classifier, the default's decision XOR logit > 0. PolicyError for a regalloc
        policy (it answers whole observations: `act`)."""
        core = _running_copy(self)
        with policy_errors():
            return core.decisions(rows)

    # -- one observation --------------------------------------------------------------------
    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> int:
        """The decision for one observation (arrays by feature name): inlining 0/1, regalloc
        the index of the candidate to evict. ``inlining_default`` and
        ``host-emulation-v2`` come from ``info["default_action"]`` where the observation
        lacks them. PolicyError when a feature is missing or has the wrong number of
        values."""
        return self.act_with_logits(observation, info)[0]

    def act_with_logits(self, observation: Mapping[str, Any],
                        info: Mapping[str, Any] | None = None) -> tuple[int, np.ndarray]:
        """`act`'s answer and the logits it computed (one, or one per candidate)."""
        core = _running_copy(self)
        with policy_errors():
            action, logits = core.decide(observation, info)
        return int(action), logits

    def __getstate__(self) -> dict[str, Any]:
        """The fields (pickled to workers): not the core's copy, which is remade there."""
        return {k: v for k, v in self.__dict__.items() if k != "_running"}

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
