"""Drift lines (mlgo_env.tuning.replay_drift): which moved keys a replay line gets, pure; the
real compiler's side (a drift line keeps a decision across an edit, and changes nothing
where it was made) is tests/python/test_tune.py's ReplayDriftLines."""
import pytest

from mlgo_env.tuning import replay_drift as rd


def test_a_key_splits_into_frames_and_joins_back():
    key = "convert_glob:106:9 @ pcre2_pattern_convert_8:66:10"
    frames = rd.split_key(key)
    assert frames == [("convert_glob", 106, 9), ("pcre2_pattern_convert_8", 66, 10)]
    assert rd.join_key(frames) == key
    assert rd.split_key("ns::f<int>:3:4") == [("ns::f<int>", 3, 4)]
    assert rd.outermost(key) == "pcre2_pattern_convert_8"
    with pytest.raises(ValueError, match="f:x:4"):
        rd.split_key("f:x:4")


def test_each_frame_moves_alone_within_the_window():
    line = ("g", "w", "f:10:3 @ g:66:10")
    out = rd.variants({line: False}, {}, window=(-2, 3))
    keys = {k[2] for k in out}
    assert keys == {"f:8:3 @ g:66:10", "f:9:3 @ g:66:10", "f:11:3 @ g:66:10",
                    "f:12:3 @ g:66:10", "f:13:3 @ g:66:10",
                    "f:10:3 @ g:64:10", "f:10:3 @ g:65:10", "f:10:3 @ g:67:10",
                    "f:10:3 @ g:68:10", "f:10:3 @ g:69:10"}
    assert set(out.values()) == {False}
    assert {(k[0], k[1]) for k in out} == {("g", "w")}  # the line's caller and callee


def test_a_known_call_and_offsets_below_zero_get_no_drift_line():
    line = ("f", "w", "f:1:3")
    known = {("w", "f:2:3"): False, ("w", "f:3:3"): False}  # calls of the checked compile
    out = {k[2] for k in rd.variants({line: False}, known, window=(-4, 4))}
    assert out == {"f:0:3", "f:4:3", "f:5:3"}
    negative = f"f:{2**32 - 1}:3"  # a call above its function's first line, modulo 2**32
    assert rd.variants({("f", "w", negative): True}, {}, window=(-1, 1)) == {}


def test_a_moved_key_nearer_to_a_call_answered_otherwise_is_not_written():
    # w at offset 10 was kept ("no"), w at 14 in the same column inlined ("yes"): a call
    # moved to 12 is as near to either, so neither answer is written there
    line = ("f", "w", "f:10:3")
    known = {("w", "f:14:3"): True, ("w", "f:30:7"): True}  # another column: no neighbour
    out = {k[2]: a for k, a in rd.variants({line: False}, known, window=(-3, 8)).items()}
    assert set(out) == {"f:7:3", "f:8:3", "f:9:3", "f:11:3"}
    assert set(out.values()) == {False}
    # the same answer nearby is no obstacle
    known[("w", "f:14:3")] = False
    out = {k[2] for k in rd.variants({line: False}, known, window=(-3, 8))}
    assert "f:12:3" in out and "f:18:3" in out and "f:14:3" not in out


def test_two_lines_proposing_one_key_with_other_answers_write_neither():
    lines = {("f", "w", "f:10:3 @ g:5:1"): False, ("f", "w", "f:10:3 @ h:5:1"): True,
             ("g", "w", "f:20:3 @ g:5:1"): False}
    out = rd.variants(lines, {}, window=(-12, 12))
    keys = {k[2]: a for k, a in out.items()}
    # f:10:3 @ g:5:1 and f:20:3 @ g:5:1 agree: the offsets between them are written
    assert keys["f:15:3 @ g:5:1"] is False
    # the outer frames g:N:1 and h:N:1 are other functions: no clash between them
    assert keys["f:10:3 @ h:7:1"] is True and keys["f:10:3 @ g:7:1"] is False
    # neighbours with other answers share the offsets between them by nearness (rule 2)
    near = {("f", "w", "f:10:3"): False, ("f", "w", "f:12:3"): True}
    out = {k[2]: a for k, a in rd.variants(near, {}, window=(-4, 4)).items()}
    assert "f:11:3" not in out and out["f:9:3"] is False and out["f:13:3"] is True
    # one key proposed by two lines with other answers, each moving another frame
    clash = {("g", "w", "f:10:3 @ g:5:1"): False, ("g", "w", "f:8:3 @ g:7:1"): True}
    out = {k[2]: a for k, a in rd.variants(clash, {}, window=(-4, 4)).items()}
    assert "f:10:3 @ g:7:1" not in out and "f:8:3 @ g:5:1" not in out
    assert out["f:10:3 @ g:6:1"] is False and out["f:9:3 @ g:7:1"] is True
