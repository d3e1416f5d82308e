"""Each module's tuning state, one JSON file per module under DIR/state/.

A state says which module it is (its corpus identity), how far its search got (``status``:
``done`` when nothing was left to try, ``stopped`` when the budget ran out, ``interrupted``
on Ctrl-C or a failure), its scores, the search's own state (mlgo_env.tuning.tuner), and
its table entry once recorded (with the best score it recorded, so an unchanged best is not
recorded again). `python -m mlgo_env.tune` reads every state before it starts: an unchanged
module is skipped whatever its status (``--resume`` continues the stopped and interrupted
ones), a changed one (bitcode, command or compiler) is tuned again from the start.

Files are replaced atomically; a state that cannot be read is reported and treated as
absent (the module is tuned again), never trusted.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from typing import Any

from .table import Entry, TableError, write_atomic

STATUSES = ("done", "stopped", "interrupted")


def state_path(directory: str, module: str) -> str:
    return os.path.join(directory, "state", urllib.parse.quote(module, safe="") + ".json")


def save_state(directory: str, module: str, state: dict[str, Any]) -> None:
    write_atomic(state_path(directory, module), json.dumps(state) + "\n")


def load_states(directory: str, problem: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """({module: state} of `problem`, [a line per state file that could not be used])."""
    folder = os.path.join(directory, "state")
    states: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    if not os.path.isdir(folder):
        return states, problems
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
            module = state["module"]
            if state["problem"] != problem:
                problems.append(f"{path}: a state of problem '{state['problem']}', not "
                                f"'{problem}' (ignored)")
                continue
            if state["status"] not in STATUSES or not isinstance(state["identity"], dict):
                raise ValueError("bad status or identity")
            if state.get("entry") is not None:
                Entry.from_json(state["entry"], path)
        except (OSError, ValueError, KeyError, TypeError, TableError) as e:
            problems.append(f"{path}: unreadable, the module is tuned again ({e})")
            continue
        states[module] = state
    return states, problems


def table_entry(state: dict[str, Any]) -> dict[str, Any] | None:
    """The entry a module's state puts in the table: its joint entry (eviction and priority
    decisions, mlgo_env.tuning.priorities) while the eviction-only entry it beat is still the
    state's, else the state's own entry (None: none)."""
    joint = state.get("priorities") or {}
    if joint.get("entry") is not None and joint.get("alone_entry") == state.get("entry"):
        return joint["entry"]
    return state.get("entry")
