"""The trainer's bookkeeping: progress lines, checkpoints, history and the learning curve."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np


#: where the trainer's wall time goes (Clock.breakdown); "other" is the rest (set-up,
#: bookkeeping, checkpoints)
PHASES = ("trace", "fitting", "compiling", "replaying", "selection", "evaluation")


class Clock:
    """Where the time goes: wall time per phase (PHASES), and within compiled episodes the
    summed clang / policy / host time. Compiles are counted apart from replays (results
    the replay cache answered without clang) and from exploration's compiles."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.times = {p: 0.0 for p in PHASES}
        self.times.update({"clang": 0.0, "policy": 0.0, "host": 0.0})
        self.played = 0     # episodes clang actually ran
        self.replayed = 0   # (module, policy) results answered by the replay cache
        self.explored = 0   # of `played`, the episodes exploration compiled
        self.idle_rounds = 0  # search rounds whose candidates were all replays
        self._window = (self.start, 0)  # (time, played) at the previous progress line

    def elapsed(self) -> float:
        return max(time.monotonic() - self.start, 1e-9)

    def account(self, played: list[Any], replayed: int, play_wall: float,
                lookup_wall: float = 0.0, phase: str | None = None) -> None:
        """Adds one evaluation: its compiled EpisodeResults, its replays, the wall time of
        the compiles and of the replay look-ups. `phase` "selection" or "evaluation" books
        both times there; otherwise they are "compiling" and "replaying"."""
        if phase in ("selection", "evaluation"):
            self.times[phase] += play_wall + lookup_wall
        else:
            self.times["compiling"] += play_wall
            self.times["replaying"] += lookup_wall
        self.times["policy"] += sum(r.policy_seconds for r in played)
        self.times["clang"] += sum(r.compile_seconds for r in played)
        self.times["host"] += sum(max(r.seconds - r.compile_seconds - r.policy_seconds, 0.0)
                                  for r in played)
        self.played += len(played)
        self.replayed += replayed

    def breakdown(self) -> dict[str, float]:
        """Seconds per phase since the start, and "other" (the rest of the wall time)."""
        out = {p: float(self.times[p]) for p in PHASES}
        out["other"] = max(self.elapsed() - sum(out.values()), 0.0)
        return out

    def breakdown_line(self) -> str:
        b = self.breakdown()
        total = sum(b.values()) or 1e-9
        return "time: " + ", ".join(f"{k} {v:.0f}s ({v / total:.0%})" for k, v in b.items())

    def summary(self) -> str:
        """Compiles/s (overall and since the previous line), replays apart, the split of
        compiled episodes' time, for the progress line."""
        now = time.monotonic()
        then, before = self._window
        recent = (self.played - before) / max(now - then, 1e-9)
        self._window = (now, self.played)
        t = self.times
        spent = (t["clang"] + t["policy"] + t["host"]) or 1e-9
        return (f"{self.played / self.elapsed():.2f} compiles/s overall, {recent:.2f} since "
                f"the last line ({self.played} compiled, {self.explored} of them exploring; "
                f"{self.replayed} replayed; {self.idle_rounds} idle rounds) | compile time: "
                f"clang {t['clang'] / spent:.0%} host {t['host'] / spent:.0%} policy "
                f"{t['policy'] / spent:.0%}")


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
