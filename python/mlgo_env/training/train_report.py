"""The trainer's bookkeeping: progress lines, checkpoints, history and the learning curve."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np


class Clock:
    """Where the time goes: episode wall time, and summed clang / policy / host time."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.times = {"episodes": 0.0, "clang": 0.0, "policy": 0.0, "host": 0.0,
                      "trace": 0.0, "cloning": 0.0}
        self.played = 0     # episodes clang actually ran
        self.replayed = 0   # (module, policy) results answered by the replay cache

    def elapsed(self) -> float:
        return max(time.monotonic() - self.start, 1e-9)

    def account(self, played: list[Any], replayed: int, wall: float) -> None:
        """Adds one evaluation round: its played EpisodeResults, its replays, its wall time."""
        self.times["episodes"] += wall
        self.times["policy"] += sum(r.policy_seconds for r in played)
        self.times["clang"] += sum(r.compile_seconds for r in played)
        self.times["host"] += sum(max(r.seconds - r.compile_seconds - r.policy_seconds, 0.0)
                                  for r in played)
        self.played += len(played)
        self.replayed += replayed

    def summary(self) -> str:
        """episodes/s and the split of episode time, for the progress line."""
        t = self.times
        spent = (t["clang"] + t["policy"] + t["host"]) or 1e-9
        return (f"{self.played / self.elapsed():.2f} episodes/s ({self.played} played, "
                f"{self.replayed} replayed) | episode time: clang {t['clang'] / spent:.0%} "
                f"host {t['host'] / spent:.0%} policy {t['policy'] / spent:.0%} | trace "
                f"{t['trace']:.0f}s cloning {t['cloning']:.0f}s")


def progress_line(row: dict[str, Any], best: float, clock: Clock) -> str:
    """One line per search round."""
    extra = ""
    if "check_score" in row:
        extra += f" check {row['check_score']:+.5f}"
    if "validation_change" in row:
        extra += (f" validation: mean {row['validation_reward_mean']:+.5f} total "
                  f"{row['validation_change'] * 100:+.2f}%")
    return (f"iter {row['iteration']:4d} score {row['score']:+.5f} reward mean "
            f"{row['reward_mean']:+.5f} p10/50/90 {row['p10']:+.4f}/{row['p50']:+.4f}/"
            f"{row['p90']:+.4f} total {row['total_change'] * 100:+.2f}%{extra} best "
            f"{best:+.5f} sigma {row['sigma']:.2f} | {clock.summary()}")


def save_checkpoint(path: str, state: dict[str, Any]) -> None:
    """Writes the JSON-able `state` atomically as an .npz (one JSON string inside)."""
    tmp = path + ".tmp.npz"
    np.savez(tmp, state=json.dumps(state))
    os.replace(tmp, path)


def load_checkpoint(path: str) -> dict[str, Any]:
    with np.load(path) as z:
        return json.loads(str(z["state"]))


def write_history(path: str, history: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(history, f, indent=1)


def plot(path: str, history: list[dict[str, Any]]) -> None:
    """The learning curve: the round's best candidate and the incumbent on the search
    modules, and the check modules' score of each new incumbent."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rounds = [h for h in history if h.get("phase") == "search"]
    checks = [h for h in history if "check_score" in h]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([h["iteration"] for h in rounds], [h["score"] for h in rounds], ".",
            alpha=0.5, label="round's best candidate (search modules)")
    ax.plot([h["iteration"] for h in rounds], [h["best"] for h in rounds],
            label="incumbent (search modules)")
    ax.plot([h["iteration"] for h in checks], [h["check_score"] for h in checks], "o-",
            label="incumbent (check modules)")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("search round")
    ax.set_ylabel("score (blend of mean reward and total reduction)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
