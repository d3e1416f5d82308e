"""Helpers of the cluster tests: where the build is, running the package's commands,
reading evaluate's output, finding and stopping processes."""

import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MLGO_ENV = os.environ.get("MLGO_ENV") or os.path.join(ROOT, "build", "src", "mlgo-env")
DEMO = os.path.join(os.path.dirname(os.path.dirname(MLGO_ENV)), "corpus", "demo-Oz")


def command_env():
    """The environment the package's commands and Dask workers run with."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("MLGO_ENV_CORE_DIR", os.path.join(os.path.dirname(os.path.dirname(MLGO_ENV)),
                                                     "python"))
    env["MLGO_ENV"] = MLGO_ENV
    return env


def run_module(*args, check=True, timeout=600):
    proc = subprocess.run([sys.executable, "-m", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=command_env(),
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def rows_of(stdout):
    """{module: (default, policy, reward)} and the total line of an evaluate run."""
    lines = stdout.strip().splitlines()
    rows = {}
    for line in lines[1:]:
        parts = line.split()
        if len(parts) == 4 and not line.startswith(("mean", "total", "failed")):
            rows[parts[0]] = tuple(parts[1:])
    return rows, lines[-1]


def children_named(parent, name):
    """Pids of live (not zombie) children of `parent` whose command is `name`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        if int(ppid) == parent and state != "Z" and comm.startswith(name):
            found.append(int(pid))
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def stop(process, seconds=30):
    """Ends a child process group we started: SIGTERM, then SIGKILL."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
