"""An interrupted mlgo-env leaves no compiler and no temporary file (run by ctest).

clang in interactive mode does not exit when its host vanishes: it spins at
100% CPU on the closed channel. So every command that runs compilers must kill
them when it is interrupted. These tests start `mlgo-env trace`, `mlgo-env
replay --verify` and the stdio server on the demo corpus with a private
--temp-dir, signal them while compilers run, and then look for leftovers:
processes whose command line names that directory, entries in it, and the
trace's temporary files.

Needs MLGO_ENV (the mlgo-env executable) in the environment: ctest sets it; a missing one
fails (real_tools.py).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import mlgo_env  # noqa: E402
from mlgo_env import remote  # noqa: E402
from real_tools import needs, path_of  # noqa: E402

MLGO_ENV = path_of("MLGO_ENV")


def cmdline(pid):
    """The command line of `pid` (b"" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def processes_naming(text):
    """Pids of live processes whose command line contains `text`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and text.encode() in cmdline:
            found.append(int(pid))
    return found


def wait_for(predicate, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


@needs("MLGO_ENV")
class Interrupt(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mlgo-interrupt-")
        self.scratch = os.path.join(self.dir, "scratch")  # --temp-dir: compilers name it
        os.mkdir(self.scratch)

    def tearDown(self):
        for pid in processes_naming(self.scratch):  # Never leave a spinning clang behind.
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)

    def compilers_running(self):
        return any(b"interactive-channel-base" in cmdline(pid)
                   for pid in processes_naming(self.scratch))

    def assert_nothing_left(self, process, sig, stderr):
        self.assertEqual(process.returncode, -sig, stderr)  # died of the signal, after cleaning up
        self.assertIn("interrupted (SIG", stderr)
        self.assertTrue(wait_for(lambda: not processes_naming(self.scratch), 10),
                        f"compilers left running: {processes_naming(self.scratch)}")
        self.assertEqual(os.listdir(self.scratch), [])

    def start(self, *args):
        return subprocess.Popen([MLGO_ENV, *args, f"--temp-dir={self.scratch}", "--jobs=2",
                                 "--no-disk-cache"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    def test_trace_interrupted_by_each_signal(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                output = os.path.join(self.dir, f"{sig.name}.log")
                process = self.start("trace", "--problem=inlining", "--sampling-rate=1",
                                     f"--output={output}", "--no-progress")
                self.assertTrue(wait_for(self.compilers_running), "no compiler started")
                process.send_signal(sig)
                _, stderr = process.communicate(timeout=60)
                self.assert_nothing_left(process, sig, stderr)
                leftovers = [n for n in os.listdir(self.dir) if n.startswith(sig.name)]
                self.assertEqual(leftovers, [], "the trace's temporary files remain")

    def test_replay_verify_interrupted(self):
        trace = os.path.join(self.dir, "t.log")
        subprocess.run([MLGO_ENV, "trace", "--problem=regalloc", "--sampling-rate=1",
                        f"--output={trace}", "--no-progress", "--jobs=2"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        process = self.start("replay", trace, "--verify")
        self.assertTrue(wait_for(self.compilers_running), "no compiler started")
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        self.assert_nothing_left(process, signal.SIGINT, stderr)

    def test_stdio_server_hangup_kills_open_episodes(self):
        client = remote.connect_stdio(
            [MLGO_ENV, "--problem=inlining", f"--temp-dir={self.scratch}", "--no-disk-cache"],
            stderr=subprocess.DEVNULL)
        process = client._transport.process
        env = mlgo_env.make("inlining", remote=client)
        env.reset(options={"module": "bignum.o"})  # clang now waits for the agent
        self.assertTrue(self.compilers_running())
        process.send_signal(signal.SIGHUP)
        self.assertEqual(process.wait(timeout=60), 0)  # an orderly shutdown
        self.assertTrue(wait_for(lambda: not processes_naming(self.scratch), 10),
                        f"compilers left running: {processes_naming(self.scratch)}")
        self.assertEqual(os.listdir(self.scratch), [])
        client.close()


if __name__ == "__main__":
    unittest.main()
