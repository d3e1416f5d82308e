"""Documented exceptions: invalid and mistyped actions, bad arguments, a
killed server; a module without decisions; Ctrl-C."""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

import mlgo_env
from conftest import MLGO_ENV, NO_DECISIONS, Server, processes_naming, wait_for

BACKENDS = ["inprocess", "remote"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_invalid_action_leaves_the_episode_usable(make_env, backend):
    env = make_env("inlining", backend)
    obs, info = env.reset(options={"module": "codecs.o"})
    with pytest.raises(mlgo_env.InvalidAction) as caught:
        env.step(5)
    assert caught.value.code == -32001
    assert "0 (do not inline) or 1" in caught.value.message
    for wrong in ("1", None, [0, 1], object(), 2**70):
        with pytest.raises(mlgo_env.InvalidAction):
            env.step(wrong)
    steps = 0
    while obs is not None:
        obs, reward, terminated, truncated, info = env.step(info["default_action"])
        steps += 1
    assert terminated and reward == 0.0 and steps > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_arguments(make_env, backend):
    env = make_env("inlining", backend)
    with pytest.raises(mlgo_env.UnknownEpisode):
        env.step(0)
    with pytest.raises(mlgo_env.InvalidParams) as caught:
        env.reset(options={"module": "nope.o"})
    assert "nope.o" in caught.value.message
    with pytest.raises(mlgo_env.InvalidParams):
        env.reset(options={"modul": "sha256.o"})
    with pytest.raises(mlgo_env.InvalidParams):
        env.reset(seed=-1)


def test_bad_make_arguments(servers):
    with pytest.raises(mlgo_env.InvalidParams) as caught:
        mlgo_env.make("inline")
    assert "inlining" in caught.value.message
    with pytest.raises(mlgo_env.InvalidParams):
        mlgo_env.make("inlining", corpus="/nonexistent/corpus")
    address = servers("inlining").address
    with pytest.raises(mlgo_env.InvalidParams):
        mlgo_env.make("inlining", remote=address, jobs=2)
    with pytest.raises(mlgo_env.InvalidParams):
        mlgo_env.make("regalloc", remote=address)
    with pytest.raises(mlgo_env.ServerGone):
        mlgo_env.make("inlining", remote="unix:/nonexistent/mlgo.sock")


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_without_decisions_by_name(make_env, backend):
    env = make_env("inlining", backend, **NO_DECISIONS)
    obs, info = env.reset(options={"module": "sha256.o"})
    assert obs is None
    assert info["terminated"] is True and info["truncated"] is False
    assert info["reward"] == 0.0 and info["channel_opened"] is False
    assert info["policy_score"] == info["default_score"] > 0
    with pytest.raises(mlgo_env.UnknownEpisode):
        env.step(0)
    # Sampled, such modules are skipped; here none is left.
    with pytest.raises(mlgo_env.InvalidParams) as caught:
        env.reset()
    assert "makes a decision" in caught.value.message


def test_killed_server_raises_server_gone():
    server = Server("--problem=inlining", "--no-disk-cache", "--jobs=1")
    try:
        env = mlgo_env.make("inlining", remote=server.address)
        env.reset(options={"module": "bignum.o"})
        server.process.kill()
        server.process.wait(timeout=30)
        with pytest.raises(mlgo_env.ServerGone) as caught:
            env.step(0)
        assert "closed the connection" in str(caught.value) or "gone" in str(caught.value)
        assert isinstance(caught.value, ConnectionError)
        with pytest.raises(mlgo_env.ServerGone):
            env.reset()
        env.close()
    finally:
        server.stop()


INTERRUPTED = textwrap.dedent("""
    import random, sys
    import mlgo_env
    from mlgo_env.agents import random_action
    vec = mlgo_env.make_vec("regalloc", 2, jobs=2, disk_cache=False, temp_dir=sys.argv[1])
    rng = random.Random(0)
    print("ready", flush=True)
    while True:
        obs, infos = vec.reset(options={"modules": ["bignum.o", "rb_tree.o"]})
        while vec.live():
            actions = [random_action("regalloc", o, rng) if o is not None else 0 for o in obs]
            obs, *_ = vec.step(actions)
""")


def test_ctrl_c_ends_cleanly_without_compilers_left():
    scratch = tempfile.mkdtemp(prefix="mlgo-pytest-int-")
    try:
        process = subprocess.Popen([sys.executable, "-c", INTERRUPTED, scratch],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=dict(os.environ))
        assert process.stdout.readline().strip() == "ready"
        assert wait_for(lambda: processes_naming(scratch), 30), "no compiler started"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert "KeyboardInterrupt" in stderr, stderr
        assert wait_for(lambda: not processes_naming(scratch), 10), \
            f"compilers left: {processes_naming(scratch)}"
        assert os.listdir(scratch) == []
    finally:
        for pid in processes_naming(scratch):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["rm", "-rf", scratch], check=False)


# A lone step runs on the calling thread (no pool thread watches it): Ctrl-C must
# still end it promptly while clang is stopped, and leave no compiler behind.
LONE_STEP_INTERRUPTED = textwrap.dedent("""
    import os, signal, sys, threading, time
    import mlgo_env
    env = mlgo_env.make("inlining", disk_cache=False, temp_dir=sys.argv[1])
    obs, info = env.reset(options={"module": "bignum.o"})
    os.kill(env.backend.compiler_pid(env.episode), signal.SIGSTOP)
    sent = []
    def interrupt_soon():
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt_soon, daemon=True).start()
    try:
        env.step(0)
        print("step returned", flush=True)
    except KeyboardInterrupt:
        print("interrupted after %.3f" % (time.monotonic() - sent[0]), flush=True)
""")


def assert_interrupted_within(script, scratch, extra_args, bound, timeout):
    """Runs `script` (argv: scratch, *extra_args), which Ctrl-Cs itself: it must report
    the interrupt within `bound` seconds and leave no process naming `scratch` and
    nothing in it; `scratch` is removed afterwards whatever happens."""
    try:
        done = subprocess.run([sys.executable, "-c", script, scratch, *extra_args],
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ))
        assert done.stdout.startswith("interrupted after"), done.stdout + done.stderr
        assert float(done.stdout.split()[-1]) < bound, done.stdout
        assert wait_for(lambda: not processes_naming(scratch), 10), \
            f"compilers left: {processes_naming(scratch)}"
        assert os.listdir(scratch) == []
    finally:
        for pid in processes_naming(scratch):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["rm", "-rf", scratch], check=False)


def test_ctrl_c_ends_a_lone_step_waiting_on_a_stopped_clang_within_200ms():
    assert_interrupted_within(LONE_STEP_INTERRUPTED, tempfile.mkdtemp(prefix="mlgo-pytest-lone-"),
                              [], 0.2, 60)


# The same for a module's first regalloc reset, which builds its optimised IR on the
# calling thread: a clang wrapper stops itself in place of that optimising compile
# (deterministic: it hangs until killed), and Ctrl-C must end the reset promptly, kill
# it and cache nothing.
STOPPING_OPTIMISER = textwrap.dedent("""\
    #!/bin/sh
    case " $* " in *" -emit-llvm-bc "*) kill -STOP $$ ;; esac
    exec clang-22 "$@"
""")

LONE_REGALLOC_RESET_INTERRUPTED = textwrap.dedent("""
    import os, signal, sys, threading, time
    import mlgo_env
    scratch, clang = sys.argv[1], sys.argv[2]
    env = mlgo_env.make("regalloc", disk_cache=False, temp_dir=scratch, clang=clang)
    def stopped_optimiser():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read()
                with open(f"/proc/{pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if b"-emit-llvm-bc" in argv and scratch.encode() in argv and state == "T":
                return True
        return False
    sent = []
    def interrupt_once_it_hangs():
        deadline = time.monotonic() + 30
        while not stopped_optimiser() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt_once_it_hangs, daemon=True).start()
    try:
        env.reset(options={"module": "bignum.o"})
        print("reset returned", flush=True)
    except KeyboardInterrupt:
        print("interrupted after %.3f" % (time.monotonic() - sent[0]), flush=True)
""")


def test_ctrl_c_ends_a_lone_regalloc_reset_waiting_on_its_stopped_optimising_clang():
    with tempfile.TemporaryDirectory(prefix="mlgo-pytest-wrapper-") as wrapper_dir:
        clang = os.path.join(wrapper_dir, "clang")
        with open(clang, "w") as f:
            f.write(STOPPING_OPTIMISER)
        os.chmod(clang, 0o755)
        assert_interrupted_within(LONE_REGALLOC_RESET_INTERRUPTED,
                                  tempfile.mkdtemp(prefix="mlgo-pytest-optir-"), [clang], 1.0,
                                  120)
