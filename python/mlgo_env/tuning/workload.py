"""The project's own commands, run for `python -m mlgo_env.tune pick`: its build and its
workload, and what the workload executes per function.

A command is a shell command line (``/bin/sh -c``), run in its own process group with its
output in a log file; it must exit 0 within its timeout. A command that fails, or is still
running at the timeout (then its whole process group is killed), raises
:class:`CommandError` with the end of its output; Ctrl-C kills the group too, then raises
KeyboardInterrupt. Nothing of it is left running.

The workload runs its measured programs through ``$MLGO_RUN`` (``"$MLGO_RUN" ./prog
args``): an executable script that runs the program under ``valgrind --tool=cachegrind
--cache-sim=no``, which counts every instruction the program executes, deterministically,
and writes one file per process. :func:`read_cachegrind` sums such a file per function
(its symbol name, as the compiler named it: cachegrind is told not to demangle).

Blocks while a command runs; not thread-safe (one command at a time per `Runner`).
"""

from __future__ import annotations

import collections
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field

#: lines of a failed command's output its error shows
TAIL_LINES = 30


class CommandError(RuntimeError):
    """A build or workload command failed, timed out, or measured nothing."""


@dataclass
class Counts:
    """What one workload run executed: `total` instructions of every process run through
    $MLGO_RUN, and per function name (cachegrind's symbol names, version suffixes cut)."""
    total: int = 0
    functions: collections.Counter = field(default_factory=collections.Counter)
    processes: int = 0


def read_cachegrind(path: str) -> Counts:
    """One cachegrind output file (``events: Ir``) summed per function. CommandError
    naming the file when it is unreadable, counts no Ir, or its costs do not add up to
    its ``summary:`` line (a process killed while writing)."""
    counts = Counts(processes=1)
    summary, function, column = None, None, None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line[:1].isdigit():
                    if function is None or column is None:
                        raise ValueError("a cost line before its function")
                    parts = line.split()
                    cost = int(parts[column]) if len(parts) > column else 0
                    counts.functions[function] += cost
                    counts.total += cost
                elif line.startswith("fn="):
                    function = line[3:].strip().split("@", 1)[0]
                elif line.startswith("events:"):
                    events = line.split()[1:]
                    if "Ir" not in events:
                        raise ValueError("it counts no Ir")
                    column = 1 + events.index("Ir")
                elif line.startswith("summary:") and column is not None:
                    summary = int(line.split()[column])
    except (OSError, ValueError, IndexError) as e:
        raise CommandError(f"cachegrind output '{path}' is unreadable: {e}") from None
    if summary is None or summary != counts.total:
        raise CommandError(f"cachegrind output '{path}' is incomplete (its costs add up to "
                           f"{counts.total}, its summary says {summary})")
    return counts


class Runner:
    """Runs the project's commands in `directory` with `timeout` seconds each, logging
    into `logs` (a directory that exists)."""

    def __init__(self, directory: str, timeout: float, logs: str) -> None:
        self.directory, self.timeout, self.logs = directory, timeout, logs
        self.valgrind = shutil.which("valgrind")

    def run(self, what: str, command: str, env: dict[str, str], log: str) -> None:
        """Runs `command` (described as `what` in errors) to its end; its output goes to
        `log`. CommandError when it exits non-zero or outlives the timeout."""
        with open(log, "wb") as out:
            p = subprocess.Popen(["/bin/sh", "-c", command], cwd=self.directory, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                code = p.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(p)
                raise CommandError(f"{what} did not finish within {self.timeout:g} s "
                                   f"(killed): {command}{_tail(log)}") from None
            except BaseException:
                _kill_group(p)
                raise
            finally:
                _kill_group(p)  # what the command left running in its group
        if code != 0:
            raise CommandError(f"{what} failed (exit status {code}): {command}{_tail(log)}")

    def measure(self, command: str, env: dict[str, str], where: str) -> Counts:
        """Runs the workload `command` with $MLGO_RUN counting its programs' instructions
        (their cachegrind files go to `where`, a new directory), and sums them.
        CommandError as :meth:`run`, when valgrind is missing, or when no program ran
        through $MLGO_RUN."""
        if not self.valgrind:
            raise CommandError("measuring the workload needs valgrind (Debian package "
                               "valgrind); none on PATH")
        os.makedirs(where)
        wrapper = os.path.join(where, "run")
        with open(wrapper, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in [
                self.valgrind, "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no",
                "--demangle=no", "--quiet",
                "--cachegrind-out-file=" + os.path.join(where, "cachegrind.%p")]) + ' "$@"\n')
        os.chmod(wrapper, 0o755)
        self.run("the workload", command, dict(env, MLGO_RUN=wrapper),
                 os.path.join(where, "workload.log"))
        total = Counts()
        for name in sorted(os.listdir(where)):
            if name.startswith("cachegrind."):
                one = read_cachegrind(os.path.join(where, name))
                total.total += one.total
                total.functions.update(one.functions)
                total.processes += 1
        if not total.processes:
            raise CommandError(f"the workload ran no program through $MLGO_RUN: {command} "
                               '(run each measured program as "$MLGO_RUN" PROGRAM ARGS)')
        return total


def _kill_group(p: subprocess.Popen) -> None:
    """Kills `p`'s process group (TERM, then KILL after 5 s) and reaps `p`."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            p.wait(timeout=wait)
            if not _group_alive(p.pid):
                break
        except subprocess.TimeoutExpired:
            continue
    p.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _tail(log: str) -> str:
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[-TAIL_LINES:]
    except OSError:
        return ""
    return ("\n  " + "\n  ".join(lines)) if lines else " (no output)"
