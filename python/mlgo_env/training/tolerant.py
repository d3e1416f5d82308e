"""Episodes whose compiler fails under a candidate's decisions, scored instead of fatal.

A search that flips inlining decisions can drive clang into a crash (seen: clang-22
exiting with SIGSEGV in the inliner on a ThinLTO C++ module after a grouped flip) or past
its compile timeout. That is an outcome of the candidate, not of the run: the trainer
wraps its task runner in :class:`TolerantPlayer`, whose ``play`` turns each failed
episode into a result as bad as code twice the default's size (reward -1, policy score
twice the default score; the default score is the one the runner last saw for that
module, 0 when it has seen none), logs the first failure of each module, and counts them
all (``failures``). Everything else is the wrapped runner's.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .. import episodes as ep
from ..cluster.runner import Failure

#: the reward a failed episode gets (what doubling the default's size would give)
FAILED_REWARD = -1.0


class TolerantPlayer:
    """`runner`'s play with failures scored (module docstring); `log` gets one line per
    module that failed for the first time."""

    def __init__(self, runner: Any, log: Optional[Callable[[str], None]] = None) -> None:
        self.runner = runner
        self.log = log
        self.failures = 0
        self.failed_modules: dict[str, str] = {}  # module -> first message
        self._defaults: dict[str, float] = {}

    def play(self, jobs: Sequence[tuple[str, Any]]) -> list[ep.EpisodeResult]:
        outcomes = self.runner.play_outcomes(jobs)
        for outcome in outcomes:
            if not isinstance(outcome, Failure):
                self._defaults[outcome.module] = outcome.default_score
        return [self._scored(m, o) if isinstance(o, Failure) else o
                for (m, _), o in zip(jobs, outcomes)]

    def _scored(self, module: str, failure: Failure) -> ep.EpisodeResult:
        self.failures += 1
        if module not in self.failed_modules:
            first_line = failure.message.strip().splitlines()[0] if failure.message else ""
            self.failed_modules[module] = first_line
            if self.log:
                self.log(f"an episode of {module} failed ({first_line}); scored as twice "
                         f"the default size, and the search goes on")
        default = self._defaults.get(module, 0.0)
        return ep.EpisodeResult(module, FAILED_REWARD, 2.0 * default, default, 0, 0.0, 0.0,
                                0.0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)
