"""The trainer and the evaluator end to end with the real clang-22 on the -Oz demo corpus
(a one-minute budget), and their answers to bad input."""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from mlgo_env.policies.margin_policy import MarginSpace, space_of
from mlgo_env.policies.policy import Layer, Policy, load_policy, save_policy
from mlgo_env.trace_log import read_trace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEMO_SRC = os.path.join(ROOT, "data", "demo_corpus", "src")


def demo_corpus():
    exe = os.environ.get("MLGO_ENV") or os.path.join(ROOT, "build", "src", "mlgo-env")
    corpus = os.path.join(os.path.dirname(os.path.dirname(exe)), "corpus", "demo-Oz")
    if not os.path.isfile(os.path.join(corpus, "corpus_description.json")):
        pytest.fail(f"the demo corpus is not built at {corpus}")
    return exe, corpus


def run_module(*args, check=True):
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def executable_bytes(path):
    """Summed sizes of an ELF64 object's SHF_EXECINSTR sections (read independently)."""
    data = open(path, "rb").read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    total = 0
    for i in range(shnum):
        _, sh_type, sh_flags, _, _, sh_size = struct.unpack_from("<IIQQQQ", data,
                                                                 shoff + i * shentsize)
        if sh_flags & 0x4 and sh_type != 8:  # SHF_EXECINSTR, not SHT_NOBITS
            total += sh_size
    return total


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    exe, corpus = demo_corpus()
    out = tmp_path_factory.mktemp("train")
    policy = out / "policy.json"
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={corpus}",
                      f"--output={policy}", "--minutes=1", "--workers=2", "--seed=3",
                      "--search-modules=8", "--check-modules=4",
                      f"--mlgo-env={exe}", f"--cache-dir={out / 'cache'}")
    return exe, corpus, out, policy, proc.stdout


def test_trainer_writes_everything(trained):
    _, _, out, policy, log = trained
    for suffix in ("", ".ckpt.npz", ".png", ".history.json", ".trace.log", ".warmstart.json"):
        assert os.path.getsize(str(policy) + suffix) > 0, suffix
    p = load_policy(policy)
    # The default method (es): a margin policy, unless a one-number baseline beat it on
    # the check modules (then that margin policy).
    chosen = p.metadata["selection"]["chosen"]
    assert p.problem == "inlining" and p.margin is not None
    if chosen == "learned":
        space, _ = space_of(p)
        assert space.anchored
    else:
        assert p.metadata["baseline"] == chosen
        assert f"does not beat {chosen} on the check modules" in log
    assert "validation" in p.metadata and p.metadata["validation"]["modules"] > 0
    assert p.metadata["episodes"] > 0 and p.metadata["chosen_round"] >= 0
    assert "compiles/s" in log and "iter    1" in log and "behavioural cloning:" in log
    history = json.loads(open(str(policy) + ".history.json").read())
    assert [h["phase"] for h in history][:2] == ["warm", "search"]


def test_cloning_agrees_with_the_default(trained):
    _, _, _, policy, _ = trained
    warm = load_policy(str(policy) + ".warmstart.json")
    trace = read_trace(str(policy) + ".trace.log")
    space, u = space_of(warm)
    decisions = (warm.logits_by_name(trace.feature_names, trace.rows) > 0).astype(float)
    # Every decision of the trace, held-out modules included.
    assert len(trace.actions) > 100
    assert (decisions == trace.actions).mean() >= 0.95
    # The agreement is not the anchor's doing alone: the same rule without clang's
    # decision (the plain margin) agrees too...
    plain = MarginSpace(space.problem, space.shape, space.mean, space.std, anchored=False)
    plain_decisions = plain.policy(u).logits_by_name(trace.feature_names, trace.rows) > 0
    assert (plain_decisions == trace.actions).mean() >= 0.95
    # ...and the search can move the boundary: a shift of 4 instructions changes decisions.
    for step in (-20.0, 20.0):
        moved = space.policy(u + np.eye(len(u))[0] * step)
        changed = (moved.logits_by_name(trace.feature_names, trace.rows) > 0) != decisions
        assert changed.mean() >= 0.01


def test_evaluate_default_total_is_plain_clang(trained, tmp_path):
    exe, corpus, out, policy, _ = trained
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={policy}",
                      f"--corpus={corpus}", "--workers=2", f"--cache-dir={out / 'cache'}",
                      "--no-baselines")
    lines = proc.stdout.strip().splitlines()
    assert lines[-1].startswith("total: default ")
    assert sum(l.startswith("total:") for l in lines) == 1
    default = int(lines[-1].split()[2])
    plain = 0
    for name in sorted(os.listdir(DEMO_SRC)):
        src = os.path.join(DEMO_SRC, name)
        cxx = name.endswith(".cpp")
        obj = tmp_path / (name + ".o")
        subprocess.run(["clang++-22" if cxx else "clang-22", "-std=c++17" if cxx else "-std=c11",
                        "-Oz", "-I", DEMO_SRC, "-c", src, "-o", str(obj)], check=True)
        plain += executable_bytes(obj)
    assert default == plain


def test_bad_policies_are_refused(trained, tmp_path):
    _, corpus, _, policy, _ = trained
    # A well-formed regalloc policy (an eviction scorer) given to an inlining evaluation.
    other = tmp_path / "other.json"
    save_policy(Policy("regalloc", ["weight", "progress"], np.zeros(2), np.ones(2),
                       [Layer(np.array([[-1.0], [1.0]]), np.zeros(1), "linear")],
                       transforms=["identity"] * 2, decision="argmax-masked", mask="mask"),
                other)
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={other}",
                      f"--corpus={corpus}", check=False)
    assert proc.returncode == 2 and "for problem 'regalloc', not 'inlining'" in proc.stderr
    # An inlining policy reading a feature clang does not offer.
    save_policy(Policy("inlining", ["no_such_feature", "threshold"], np.zeros(2), np.ones(2),
                       [Layer(np.array([[1.0], [1.0]]), np.zeros(1), "linear")]), other)
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={other}",
                      f"--corpus={corpus}", check=False)
    assert proc.returncode == 2 and "no_such_feature" in proc.stderr
    other.write_text('{"format": "mlgo-env-policy", "version": 1, "problem": "inl')
    proc = run_module("mlgo_env.evaluate", "--problem=inlining", f"--policy={other}",
                      f"--corpus={corpus}", check=False)
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr


def test_empty_corpus_writes_nothing(tmp_path):
    exe, _ = demo_corpus()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "corpus_description.json").write_text('{"modules": [], "has_thinlto": false}')
    out = tmp_path / "p.json"
    proc = run_module("mlgo_env.train", "--problem=inlining", f"--corpus={empty}",
                      f"--output={out}", "--minutes=1", f"--mlgo-env={exe}", check=False)
    assert proc.returncode == 2 and "has no modules" in proc.stderr
    assert os.listdir(tmp_path) == ["empty"]


@pytest.mark.parametrize("problem", ["inlining", "regalloc"])
def test_an_evaluation_only_corpus_is_refused(tmp_path, capsys, problem):
    from mlgo_env.training.train import main
    (tmp_path / "EVALUATION-ONLY").write_text("lua5.4\n")
    code = main([f"--problem={problem}", f"--corpus={tmp_path}",
                 f"--output={tmp_path / 'p.json'}", "--minutes=1"])
    assert code == 2
    assert "is for evaluation only" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()
