#!/usr/bin/env python3
"""What an agent loop costs in Python: five ways of running every module of a
corpus with a trivial policy, two workers at a time, measured side by side in one
run. Measure on real code (--corpus, e.g. what scripts/make_training_corpus.sh
builds, -O2 for regalloc): the demo corpus's small modules hide per-step costs.

  plain      plain clang compiles of the modules (`mlgo-env trace
             --print-commands`: the corpus recompile commands, no MLGO flags)
  reference  an in-process Python host in the style of LLVM's
             models/interactive_host.py (log_reader.py's format): it makes the
             two fifos, starts clang in interactive mode and answers each
             request itself. No reward.
  inprocess  mlgo_env.make(problem) (the compiled core), reward included
  remote     mlgo_env.make(problem, remote="unix:...") against `mlgo-env serve`
  vector     mlgo_env.make_vec(problem, 2): both workers' episodes batched

Each of the two workers is a Python thread with its own host/Env pulling the
next module from a shared queue (largest first); mlgo_env paths run with a
warm baseline cache (one untimed pass fills it). The policy: inlining follows
clang's own decision (`inlining_default`), regalloc evicts nothing when
allowed (the last position), else the first valid candidate. The paths take
turns within each round (the order rotates per round); the script prints
median wall times over --rounds, each path's ratio to plain, the ratio of
the best runs (which a busy machine disturbs least), and the CPU time of this
process (Python and the in-process environment) and of the compilers it ran.

Usage: bench/agent_loop.py [--rounds 3] [--problem inlining|regalloc|all]
                                   [--corpus DIR | --inlining-corpus DIR --regalloc-corpus DIR]
                                   [--modules N] [--paths plain,reference,...]
                                   [--mlgo-env build/src/mlgo-env]
Without a corpus: the bundled demo corpus (-Oz for inlining, -O2 for regalloc).
--modules N: a seeded sample of N modules (0 = all).
"""
import argparse
import io
import json
import os
import queue
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import mlgo_env  # noqa: E402
from mlgo_env.spaces import NUMPY_DTYPES  # noqa: E402

DEFAULT_EXE = os.path.join(HERE, "..", "build", "src", "mlgo-env")
# The flags that make clang ask (env/inlining_problem.cc, env/regalloc_problems.cc).
INTERACTIVE_FLAGS = {
    "inlining": lambda base: ["-mllvm", "-enable-ml-inliner=release", "-mllvm",
                              f"-inliner-interactive-channel-base={base}", "-mllvm",
                              "-inliner-interactive-include-default", "-mllvm",
                              "-ml-advisor-size-increase-threshold=100"],
    "regalloc": lambda base: ["-mllvm", "-regalloc-enable-advisor=release", "-mllvm",
                              f"-regalloc-evict-interactive-channel-base={base}"],
}


def trivial_action(problem, features, info=None):
    """The policy, given features by name (numpy arrays)."""
    if problem == "inlining":
        if info is not None:
            return info["default_action"]
        return int(features["inlining_default"].ravel()[0])
    mask = features["mask"].ravel()
    return len(mask) - 1 if mask[-1] == 1 else int(np.flatnonzero(mask == 1)[0])


# --- the reference host (interactive_host.py / log_reader.py style) -------

def read_header(f):
    header = json.loads(f.readline())
    specs = [(s["name"], np.dtype(NUMPY_DTYPES[s["type"]]), tuple(s["shape"]))
             for s in header["features"]]
    advice = header["advice"]
    return specs, np.dtype(NUMPY_DTYPES[advice["type"]])


def read_observation(event, f, specs):
    """Reads the record starting with line `event`: None for a context line
    (a function without decisions may be followed by another context)."""
    event = json.loads(event)
    if "observation" not in event:
        return None
    features = {}
    for name, dtype, shape in specs:
        size = dtype.itemsize * int(np.prod(shape))
        features[name] = np.frombuffer(f.read(size), dtype=dtype).reshape(shape)
    f.readline()
    return features


def unblock_if_gone(process, fifos, opened):
    """Until `opened` is set: if the compiler has exited, open and close the fifos' other
    ends (O_RDWR never blocks) so the host's blocking opens return."""
    while not opened.wait(0.01):
        if process.poll() is None:
            continue
        for path in fifos:
            try:
                os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))
            except OSError:
                pass


def reference_episode(problem, argv, scratch, index):
    base = os.path.join(scratch, f"ch{index}")
    to_compiler, from_compiler = base + ".in", base + ".out"
    os.mkfifo(to_compiler, 0o666)
    os.mkfifo(from_compiler, 0o666)
    process = subprocess.Popen(argv + INTERACTIVE_FLAGS[problem](base),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    steps = 0
    opened = threading.Event()
    # clang opens the channel only when it has a first question: a module without
    # decisions exits without opening it, and a blocking open would wait forever.
    watchdog = threading.Thread(target=unblock_if_gone,
                                args=(process, (to_compiler, from_compiler), opened))
    watchdog.start()
    try:
        with io.BufferedWriter(io.FileIO(to_compiler, "wb")) as tc, \
                io.BufferedReader(io.FileIO(from_compiler, "rb")) as fc:
            opened.set()
            if not fc.peek(1):
                process.wait()  # Gone before its first question: no decisions.
                return 0
            specs, advice = read_header(fc)
            while True:
                event = fc.readline()
                if not event:
                    break
                features = read_observation(event, fc, specs)
                if features is None:
                    continue
                tc.write(np.array(trivial_action(problem, features), dtype=advice).tobytes())
                tc.flush()
                steps += 1
        _, stderr = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"clang failed: {stderr[-400:]!r}")
    finally:
        opened.set()
        watchdog.join()
        if process.poll() is None:
            process.kill()
            process.wait()
        for path in (to_compiler, from_compiler):
            os.unlink(path)
    return steps


# --- the paths ------------------------------------------------------------

def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measured(run):
    """Runs `run` (which returns its wall time); returns (wall, this process's
    CPU, its reaped children's CPU)."""
    self0, children0 = cpu_seconds(resource.RUSAGE_SELF), cpu_seconds(resource.RUSAGE_CHILDREN)
    wall = run()
    return (wall, cpu_seconds(resource.RUSAGE_SELF) - self0,
            cpu_seconds(resource.RUSAGE_CHILDREN) - children0)


def run_workers(items, work, workers=2):
    """Calls work(worker, item) for every item, `workers` threads pulling from
    one queue; returns the wall time."""
    pending = queue.Queue()
    for item in items:
        pending.put(item)
    errors = []

    def loop(worker):
        while True:
            try:
                item = pending.get_nowait()
            except queue.Empty:
                return
            try:
                work(worker, item)
            except Exception as error:  # reported below
                errors.append(f"{item}: {error!r}")

    start = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if errors:
        sys.exit("benchmark failed: " + "; ".join(errors[:3]))
    return wall


def play(env, module):
    obs, info = env.reset(options={"module": module})
    reward = info.get("reward", 0.0)
    while obs is not None:
        obs, reward, terminated, truncated, info = env.step(trivial_action(env.problem, obs, info))
    return reward


def play_vector(vec, modules):
    start = time.perf_counter()
    for i in range(0, len(modules), 2):
        names = modules[i:i + 2]
        names += names[:1] * (2 - len(names))
        obs, infos = vec.reset(options={"modules": names})
        while vec.live():
            actions = [trivial_action(vec.problem, obs[i], infos[i]) if obs[i] is not None
                       else 0 for i in range(2)]
            obs, _, _, _, step_infos = vec.step(actions)
            for i in range(2):
                if "error" in step_infos[i]:
                    sys.exit(f"vector: {step_infos[i]['error']}")
                if step_infos[i]:
                    infos[i] = step_infos[i]
    return time.perf_counter() - start


def corpus_for(args, problem):
    own = args.inlining_corpus if problem == "inlining" else args.regalloc_corpus
    return own or args.corpus


def bench(args, problem):
    corpus = corpus_for(args, problem)
    corpus_flag = [f"--corpus={corpus}"] if corpus else []
    text = subprocess.run([args.mlgo_env, "trace", "--print-commands", f"--problem={problem}",
                           "--sampling-rate=1", *corpus_flag], check=True, capture_output=True,
                          text=True).stdout
    commands = [json.loads(line) for line in text.splitlines() if line.strip()]
    if args.modules and len(commands) > args.modules:
        import random
        commands = random.Random(0).sample(commands, args.modules)
    modules = [c["module"] for c in commands]
    scratch = tempfile.mkdtemp(prefix="mlgo-bench-loop-")
    server = None
    try:
        cache = os.path.join(scratch, "cache")
        socket_path = os.path.join(scratch, "s.sock")
        server = subprocess.Popen([args.mlgo_env, "serve", f"--problem={problem}", "--jobs=2",
                                   f"--listen=unix:{socket_path}", f"--cache-dir={cache}",
                                   *corpus_flag],
                                  stderr=subprocess.PIPE, text=True)
        if "listening on" not in server.stderr.readline():
            sys.exit("mlgo-env serve did not start")
        threading.Thread(target=lambda: server.stderr.read(), daemon=True).start()
        local = [mlgo_env.make(problem, corpus, jobs=1, cache_dir=cache) for _ in range(2)]
        remote = [mlgo_env.make(problem, remote=f"unix:{socket_path}") for _ in range(2)]
        vector = mlgo_env.make_vec(problem, 2, corpus, jobs=2, cache_dir=cache)
        # Fills the baseline cache (untimed).
        run_workers(modules, lambda w, m: play(local[w], m))

        def plain(w, index):
            argv = [os.path.join(scratch, f"{index}.o") if a == "OBJECT" else a
                    for a in commands[index]["argv"]]
            subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)

        def reference(w, index):
            argv = [os.path.join(scratch, f"r{index}.o") if a == "OBJECT" else a
                    for a in commands[index]["argv"]]
            reference_episode(problem, argv, scratch, index)

        paths = {
            "plain": lambda: run_workers(range(len(commands)), plain),
            "reference": lambda: run_workers(range(len(commands)), reference),
            "inprocess": lambda: run_workers(modules, lambda w, m: play(local[w], m)),
            "remote": lambda: run_workers(modules, lambda w, m: play(remote[w], m)),
            "vector": lambda: play_vector(vector, modules),
        }
        paths = {name: run for name, run in paths.items()
                 if name == "plain" or name in args.paths}
        times = {name: [] for name in paths}
        cpu = {name: [] for name in paths}
        names = list(paths)
        for round_ in range(args.rounds):
            # Rotate the order so that no path always runs first (or last).
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                wall, host, children = measured(paths[name])
                times[name].append(wall)
                cpu[name].append((host, children))
            print(f"  {problem} round {round_ + 1}: " + ", ".join(
                f"{n} {t[-1]:.2f}s" for n, t in times.items()), flush=True)
        for env in local + remote:
            env.close()
        vector.close()
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{problem}: {len(modules)} modules of {corpus or 'the demo corpus'}, 2 workers, "
          f"medians over {args.rounds} rounds "
          "(cpu: this process / the clangs it reaped; a server's clangs are not ours)")
    for name, median in medians.items():
        best = min(times[name]) / min(times["plain"])
        host = statistics.median(c[0] for c in cpu[name])
        children = statistics.median(c[1] for c in cpu[name])
        print(f"  {name:10} {median:7.2f} s  {median / medians['plain']:5.2f}x plain "
              f"(best/best {best:4.2f}x)  cpu {host:6.2f} s / {children:6.2f} s")
    if "inprocess" in medians and "reference" in medians:
        print(f"  inprocess / reference: {medians['inprocess'] / medians['reference']:.2f}x")
    if "remote" in medians:
        print(f"  remote / plain: {medians['remote'] / medians['plain']:.2f}x")
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlgo-env", default=DEFAULT_EXE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--problem", default="all", choices=["all", "inlining", "regalloc"])
    parser.add_argument("--corpus", help="corpus for every problem (default: the demo corpus)")
    parser.add_argument("--inlining-corpus", help="corpus for inlining (e.g. built at -Oz)")
    parser.add_argument("--regalloc-corpus", help="corpus for regalloc (e.g. built at -O2)")
    parser.add_argument("--modules", type=int, default=0, help="a seeded sample of N modules")
    parser.add_argument("--paths", default="reference,inprocess,remote,vector",
                        help="comma-separated paths to run beside plain")
    args = parser.parse_args()
    args.paths = set(args.paths.split(","))
    for problem in (["inlining", "regalloc"] if args.problem == "all" else [args.problem]):
        bench(args, problem)


if __name__ == "__main__":
    main()
