"""Shared fixtures: real clang-22 on the demo corpus, in process and served.

MLGO_ENV names the mlgo-env executable (ctest sets it; default: the
checkout's build/src/mlgo-env). Baseline scores go to one cache directory per
test session, shared by the in-process environments and the servers.
"""
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest

import mlgo_env

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLGO_ENV = os.environ.get("MLGO_ENV") or os.path.join(CHECKOUT, "build", "src", "mlgo-env")
# Makes inlining ask nothing: the module is compiled at -O0 (no inliner).
NO_DECISIONS = dict(delete_flags=["-Oz"], add_flags=["-O0", "-emit-obj"])


def processes_naming(text):
    """Pids of live processes whose command line contains `text`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


class Server:
    """`mlgo-env serve` on a Unix socket, as a child process."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="mlgo-pytest-")
        self.scratch = os.path.join(self.dir, "tmp")
        os.mkdir(self.scratch)
        self.address = "unix:" + os.path.join(self.dir, "s.sock")
        self.process = subprocess.Popen(
            [MLGO_ENV, "serve", f"--listen={self.address}", f"--temp-dir={self.scratch}", *args],
            stderr=subprocess.PIPE, text=True)
        self.lines = [self.process.stderr.readline()]
        threading.Thread(target=self._drain, daemon=True).start()
        if "listening on" not in self.lines[0]:
            self.process.wait(timeout=60)
            raise RuntimeError("mlgo-env serve failed: " + "".join(self.lines))

    def _drain(self):
        for line in self.process.stderr:
            self.lines.append(line)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        # A SIGKILLed server cannot kill its compilers: do it for it.
        for pid in processes_naming(self.scratch):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["rm", "-rf", self.dir], check=False)
        return code


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("baselines"))


@pytest.fixture(scope="session")
def servers(cache_dir):
    """One server per problem, started on first use."""
    started = {}

    def get(problem, *extra):
        key = (problem, extra)
        if key not in started:
            started[key] = Server(f"--problem={problem}", "--jobs=2",
                                  f"--cache-dir={cache_dir}", *extra)
        return started[key]

    yield get
    for server in started.values():
        assert server.stop() == 0, "".join(server.lines)


@pytest.fixture
def make_env(cache_dir, servers):
    """make_env(problem, backend, **options) -> Env; closed after the test."""
    made = []

    def make(problem, backend, **options):
        if backend == "inprocess":
            env = mlgo_env.make(problem, jobs=2, cache_dir=cache_dir, **options)
        else:
            flags = [f"--delete-flag={f}" for f in options.pop("delete_flags", [])]
            flags += [f"--add-flag={f}" for f in options.pop("add_flags", [])]
            if "ir2vec_vocab" in options:
                flags.append(f"--ir2vec-vocab={options.pop('ir2vec_vocab')}")
            assert not options, options
            env = mlgo_env.make(problem, remote=servers(problem, *flags).address)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def wait_for(predicate, seconds=10.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
