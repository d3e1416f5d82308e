"""The commands' shared set-up checks (mlgo_env.training.training_setup), no clang."""

import pytest

from mlgo_env.training import evaluate, train
from mlgo_env.training.training_setup import check_placement, scratch_dir


def test_a_cluster_and_a_server_at_once_are_refused():
    check_placement(None, "unix:/tmp/s")
    check_placement("local:2", None)
    with pytest.raises(ValueError, match="give one of them"):
        check_placement("local:2", "unix:/tmp/s")


def test_scratch_is_shared_memory_only_in_process_and_never_over_a_choice(tmp_path):
    assert scratch_dir(str(tmp_path), None) == str(tmp_path)
    assert scratch_dir(str(tmp_path), "unix:/tmp/s") == str(tmp_path)
    assert scratch_dir(None, "unix:/tmp/s") is None
    assert scratch_dir(None, None) in ("/dev/shm", None)


@pytest.mark.parametrize("command", [train.main, evaluate.main])
def test_both_commands_say_so_before_any_episode(command, tmp_path, capsys):
    args = ["--problem=inlining", f"--corpus={tmp_path}", "--scheduler=local:1",
            "--remote=unix:/nonexistent"]
    if command is train.main:
        args += [f"--output={tmp_path}/p.json", "--minutes=1"]
    else:
        args += [f"--policy={tmp_path}/none.json"]  # refused before the policy is read
    assert command(args) == 2
    assert "give one of them" in capsys.readouterr().err
