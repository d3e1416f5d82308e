"""compile_commands.json through the core (`_core.module_compiles`, the corpus layer's one
reader) and the replay writer's lookup over it (`replay_lines.compile_commands`): each build
style gives every module its own compile, named as `corpus build` names it. No clang here:
tests/python/test_build_styles.py compiles real projects of each style."""
import json

import pytest

from mlgo_env._native import load_core
from mlgo_env.tuning import replay_lines as rl


def write_db(tmp_path, entries):
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries))


def test_the_binding_gives_each_object_its_own_compile(tmp_path):
    (tmp_path / "flags.rsp").write_text("-Oz -MMD -MF r.d -c r.c")
    entries = [
        {"directory": str(tmp_path), "arguments": ["clang-22", "-Oz", "-c", "a.c", "b.c"]},
        {"directory": str(tmp_path), "command": "clang-22 @flags.rsp -o out/r.o"},
        {"directory": str(tmp_path), "arguments": ["clang-22", "a.o", "-o", "prog"]}]
    got = load_core().module_compiles(json.dumps(entries), "cc.json")
    assert [c["module"] for c in got] == ["a.o", "b.o", "out/r.o"]
    assert got[0]["arguments"] == ["clang-22", "-Oz", "-c", "a.c"]
    assert got[1]["arguments"] == ["clang-22", "-Oz", "-c", "b.c"]
    assert got[2]["arguments"] == ["clang-22", "-Oz", "-c", "r.c"]
    assert got[2]["object"] == str(tmp_path / "out" / "r.o")
    assert got[2]["directory"] == str(tmp_path)
    assert not any(c["duplicate"] for c in got)


@pytest.mark.parametrize("text, message", [
    ("[{", "malformed JSON"), ('{"a": 1}', "must be a JSON array"),
    ('[{"directory": "/b"}]', "neither 'arguments' nor 'command'")])
def test_a_malformed_database_is_a_value_error_naming_it(text, message):
    with pytest.raises(ValueError, match=f"cc.json.*{message}"):
        load_core().module_compiles(text, "cc.json")


def test_every_build_style_finds_its_modules(tmp_path):
    (tmp_path / "lt").mkdir()
    write_db(tmp_path, [
        {"directory": "/b/sub", "arguments": ["clang-22", "-Oz", "-MD", "-MF", ".deps/x.Tpo",
                                              "-MT", "x.lo", "-c", "x.c", "-fPIC", "-o",
                                              ".libs/x.o"]},
        {"directory": "/b/sub", "arguments": ["clang-22", "-Oz", "-MD", "-MF", ".deps/x.Tpo",
                                              "-MT", "x.lo", "-c", "x.c", "-o", "x.o"]},
        {"directory": "/b", "arguments": ["clang-22", "-c", "y.c", "-oy.o"]},
        {"directory": "/b", "arguments": ["clang-22", "-Oz", "-c", "src/n.c"]},
        {"directory": "/b", "arguments": ["clang-22", "-E", "z.c"]}])
    cmds = rl.compile_commands(str(tmp_path))
    assert set(cmds) == {".libs/x.o", "x.o", "y.o", "n.o"}
    assert cmds[".libs/x.o"].arguments == ["clang-22", "-Oz", "-c", "x.c", "-fPIC"]
    assert cmds["x.o"].arguments == ["clang-22", "-Oz", "-c", "x.c"]
    assert cmds[".libs/x.o"].directory == "/b/sub"
    assert cmds["y.o"].arguments == ["clang-22", "-c", "y.c"]
    assert cmds["n.o"].arguments == ["clang-22", "-Oz", "-c", "src/n.c"]


def test_the_first_entry_keeps_a_module_name_two_give(tmp_path):
    write_db(tmp_path, [
        {"directory": "/p/a", "arguments": ["clang-22", "-c", "u.c", "-o", "u.o"]},
        {"directory": "/p/b", "arguments": ["clang-22", "-c", "u.c", "-o", "u.o"]},
        {"directory": "/p/c", "arguments": ["clang-22", "-c", "v.c", "-o", "../out/v.o"]},
        {"directory": "/p/c", "arguments": ["clang-22", "-c", "w.c", "-o", "../obj/w.o"]}])
    cmds = rl.compile_commands(str(tmp_path))
    assert cmds["u.o"].directory == "/p/a" and cmds["/p/b/u.o"].directory == "/p/b"
    # objects outside their entry's directory: named from their common root, as extract does
    assert cmds["out/v.o"].directory == "/p/c" and "obj/w.o" in cmds
    assert len(cmds) == 4


def test_an_unusable_database_is_an_error_naming_it(tmp_path):
    write_db(tmp_path, [{"directory": "/b"}])
    with pytest.raises(ValueError, match="compile_commands.json"):
        rl.compile_commands(str(tmp_path))
    (tmp_path / "compile_commands.json").write_text('{"not": "a list"}')
    with pytest.raises(ValueError, match="compile_commands.json.*JSON array"):
        rl.compile_commands(str(tmp_path))
    with pytest.raises(OSError):
        rl.compile_commands(str(tmp_path / "nowhere"))
