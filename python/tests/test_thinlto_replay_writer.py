"""The ThinLTO side of the inline-replay writer (mlgo_env.tuning.thinlto_replay, and what
inline_replay writes for it): the backends' commands from a ThinLTO corpus and their
refusals, the flags files, the promoted-name count. No clang here; the real compiler and
lld: tests/python/test_thinlto_replay.py."""
import json

import pytest

from mlgo_env.tuning import inline_replay as ir
from mlgo_env.tuning import replay_lines as rl
from mlgo_env.tuning import thinlto_replay as tr

OVERRIDE = ["-c", "--target=x86_64-pc-linux-gnu", "-O2", "-fpic"]


def corpus(tmp_path, override=OVERRIDE, modules=("d/a.o", "b.o"), thinlto=True, skip=()):
    tmp_path.mkdir(parents=True, exist_ok=True)
    for m in modules:
        for x in (".bc", ".thinlto.bc"):
            if m + x not in skip:
                (tmp_path / (m + x)).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / (m + x)).write_bytes(b"BC")
    description = {"modules": list(modules), "has_thinlto": thinlto}
    if override is not None:
        description["global_command_override"] = override
    (tmp_path / "corpus_description.json").write_text(json.dumps(description))
    return str(tmp_path)


def test_each_module_is_compiled_by_its_backend_command_in_the_corpus(tmp_path):
    c = corpus(tmp_path)
    assert tr.is_thinlto(c)
    cmds = tr.backend_commands(c, "/usr/bin/clang-22")
    assert sorted(cmds) == ["b.o", "d/a.o"]
    a = cmds["d/a.o"]
    bc = str(tmp_path / "d/a.o.bc")
    assert a.arguments == ["/usr/bin/clang-22"] + OVERRIDE + [
        "-x", "ir", bc, f"-fthinlto-index={tmp_path}/d/a.o.thinlto.bc",
        "-mllvm", "-thinlto-assume-merged"]
    assert a.directory == str(tmp_path) and a.bitcode == bc


@pytest.mark.parametrize("override, why", [
    (None, "needs its backends' command"),
    (["<UNSPECIFIED>"], "needs its backends' command"),
    ([], "needs its backends' command"),
    (["-cc1", "-O2"], "not -cc1")])
def test_a_corpus_without_a_driver_backend_command_is_refused(tmp_path, override, why):
    with pytest.raises(ValueError, match=why):
        tr.backend_commands(corpus(tmp_path, override), "clang-22")


def test_a_module_without_its_index_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"b\.o\.thinlto\.bc does not exist \(module b\.o"):
        tr.backend_commands(corpus(tmp_path, skip=("b.o.thinlto.bc",)), "clang-22")


def test_other_corpora_are_not_thinlto(tmp_path):
    assert not tr.is_thinlto(corpus(tmp_path, thinlto=False))


def test_lines_naming_promoted_locals_are_counted():
    lines = {("table_add", "hash_key.llvm.3390648404629893358", "grow:9:20"): True,
             ("f.llvm.1", "g", "f:1:2"): False, ("f", "g", "f:2:2"): True}
    assert tr.promoted(lines) == 2


def test_a_thinlto_report_writes_the_link_flags_and_another_removes_them(tmp_path):
    path = str(tmp_path / "inline-replay.txt")
    rl.write_lines(path, {("f", "g", "f:2:7"): False})
    r = rl.ModuleLines("a.o", 1.0, {("f", "g", "f:2:7"): False}, tuned=b"x", replayed=1,
                       exact=True, exact_alone=True)
    said = []
    summary = ir._report(str(tmp_path), path, [r], ir.merge([r]), 0, said.append, thinlto=[])
    ldflags = (tmp_path / "inline-replay.ldflags").read_text().split()
    assert ldflags == [f"-Wl,-mllvm,-cgscc-inline-replay={path}",
                       "-Wl,-mllvm,-cgscc-inline-replay-format=LineColumn"]
    assert summary["ldflags"] == ldflags and summary["thinlto"]
    assert (tmp_path / "inline-replay.flags").read_text().split() == tr.COMPILE_FLAGS
    assert any("LDFLAGS+=" in line for line in said)
    ir._report(str(tmp_path), path, [r], ir.merge([r]), 0, said.append)
    assert not (tmp_path / "inline-replay.ldflags").exists()
    assert "-mllvm" in (tmp_path / "inline-replay.flags").read_text()


def test_promoted_lines_from_a_corpus_built_in_an_absolute_directory_warn(tmp_path):
    path = str(tmp_path / "inline-replay.txt")
    key = ("table_add", "hash_key.llvm.33", "grow:9:20")
    rl.write_lines(path, {key: True})
    r = rl.ModuleLines("c/table.o", 1.0, {key: True}, tuned=b"x", replayed=1, exact=True,
                       exact_alone=True)
    said = []
    ir._report(str(tmp_path), path, [r], ir.merge([r]), 0, said.append, thinlto=["c/table.o"])
    assert any(line.startswith("warning: 1 lines name a static function") for line in said)
    said.clear()
    ir._report(str(tmp_path), path, [r], ir.merge([r]), 0, said.append, thinlto=[])
    assert not any(line.startswith("warning") for line in said)
