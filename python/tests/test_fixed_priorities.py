"""The regalloc environment under fixed priorities (--fixed-priorities): in process and
over stdio the same scores; a bad file is refused naming it; trace and replay --verify
refuse the flag (a trace holds one channel). The -O2 demo corpus, real clang-22."""

import json
import subprocess

import pytest

import mlgo_env
from mlgo_env.errors import MlgoError
from test_regalloc_training import demo_o2


def play(env, module):
    obs, info = env.reset(options={"module": module})
    while True:
        obs, _, term, trunc, info = env.step(int(info["default_action"]))
        if term or trunc:
            return info


def test_in_process_and_served_environments_answer_the_same_priorities(tmp_path):
    exe, corpus = demo_o2()
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"modules": [{"module": "sha256.o", "functions": {}}]}))
    local = mlgo_env.make("regalloc", corpus, fixed_priorities=str(path), cache_dir=str(tmp_path))
    served = mlgo_env.make("regalloc", remote=[exe, "--problem=regalloc", f"--corpus={corpus}",
                                               f"--fixed-priorities={path}",
                                               f"--cache-dir={tmp_path}"])
    try:
        a, b = play(local, "sha256.o"), play(served, "sha256.o")
        assert a["priority_answers"] > 0 and a["priority_answers"] == b["priority_answers"]
        assert a["policy_score"] == b["policy_score"]
        assert "priority_answers" not in play(local, "lz77.o")  # not listed: clang's own
    finally:
        local.close()
        served.close()


def test_a_bad_file_is_refused_naming_it(tmp_path):
    _, corpus = demo_o2()
    path = tmp_path / "p.json"
    path.write_text('{"modules": [{"module": "a.o", "functions": {"f": {"multipliers": '
                    '{"3": -1}}}}]}')
    with pytest.raises(MlgoError, match="priorities file .*p.json.*multiplier of step 3"):
        mlgo_env.make("regalloc", corpus, fixed_priorities=str(path), cache_dir=str(tmp_path))


@pytest.mark.parametrize("args", [["trace", "--output=OUT"], ["replay", "--verify", "OUT"]])
def test_traces_refuse_fixed_priorities(tmp_path, args):
    exe, corpus = demo_o2()
    path = tmp_path / "p.json"
    path.write_text('{"modules": []}')
    out = tmp_path / "t.log"
    r = subprocess.run([exe, *[a.replace("OUT", str(out)) for a in args], "--problem=regalloc",
                        f"--corpus={corpus}", f"--fixed-priorities={path}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "--fixed-priorities is not recorded in a trace" in r.stderr
    assert not out.exists()
