"""The inline-replay writer's cache (mlgo_env.tuning.replay_cache) and the writer's choice of
which modules to compile again (inline_replay._settled): no clang here; a real second run
that reuses every module is tests/python/test_build_styles.py's."""
import os

from mlgo_env.tuning import inline_replay as ir
from mlgo_env.tuning.replay_cache import ReplayCache, module_key, source_digest
from mlgo_env.tuning.replay_lines import Command, ModuleLines


def tree(tmp_path, name, source="int f(void) { return 1; }\n"):
    """A ThinLTO backend's compile (its module and index are its file arguments) in its own
    directory."""
    d = tmp_path / name
    d.mkdir(parents=True)
    (d / "a.o").write_text(source)
    (d / "a.o.thinlto.bc").write_bytes(b"index")
    return Command(["clang-22", "-Oz", "-I" + str(d / "include"), "-x", "ir", "a.o",
                    "-fthinlto-index=a.o.thinlto.bc", "-c"], str(d), bitcode=str(d / "a.o"))


ENTRY = [{"module": "src/a.o", "actions": [1, 0]}]
CLANG = {"path": "/usr/bin/clang-22", "version": "22"}


def key(cmd, entries=ENTRY, clang=CLANG):
    return module_key("src/a.o", cmd, source_digest(cmd, ""), entries, clang)


def test_key_ignores_where_the_tree_is_and_sees_what_it_compiles(tmp_path):
    cmd = tree(tmp_path, "one")
    k = key(cmd)
    assert key(tree(tmp_path, "two")) == k  # the same compile in another directory
    assert key(tree(tmp_path, "three", source="int f(void) { return 2; }\n")) != k
    assert key(cmd, entries=[]) != k
    assert key(cmd, clang=dict(CLANG, version="23")) != k
    assert key(Command(cmd.arguments + ["-DX"], cmd.directory, cmd.bitcode)) != k


def found(module="src/a.o", reference=False):
    r = ModuleLines(module, 12.0, reference=reference)
    r.lines = {("f", "g", "f:1:2"): True, ("f", "h", "f:3:4 @ k:1:1"): False}
    r.callers = {"f", "k"}
    r.departures, r.unresolved, r.exact_alone = 2, 0, True
    r.tuned = None if reference else b"\x90\xc3"
    return r


def test_a_stored_result_comes_back_and_others_are_pruned(tmp_path):
    cache = ReplayCache(str(tmp_path))
    cache.store("k1", found())
    cache.store("k2", found("src/b.o", reference=True))
    cache.store("k3", ModuleLines("src/c.o", 1.0, why="compile failed"))  # not kept
    back = cache.load("k1", "src/a.o", 7.0)
    assert (back.lines, back.callers, back.tuned, back.saving, back.exact_alone) == \
        (found().lines, {"f", "k"}, b"\x90\xc3", 7.0, True)
    ref = cache.load("k2", "src/b.o", 0.0)
    assert ref.reference and ref.tuned is None
    cache.store_text("k2", b"\xc3")  # its object, compiled when a line reached it
    assert cache.load("k2", "src/b.o", 0.0).tuned == b"\xc3"
    assert cache.load("k3", "src/c.o", 1.0) is None
    cache.prune({"k2"})
    assert sorted(os.listdir(cache.folder)) == ["k2.json", "k2.text"]
    assert cache.load("k1", "src/a.o", 7.0) is None


def test_a_damaged_cache_file_is_a_miss(tmp_path):
    cache = ReplayCache(str(tmp_path))
    cache.store("k1", found())
    with open(os.path.join(cache.folder, "k1.json"), "w") as f:
        f.write('{"lines": [')
    assert cache.load("k1", "src/a.o", 1.0) is None
    cache.store("k1", found())
    os.unlink(os.path.join(cache.folder, "k1.text"))
    assert cache.load("k1", "src/a.o", 1.0) is None


def test_only_modules_the_file_can_change_are_compiled_again():
    own = found()
    merged = ir.merge([own])
    assert ir._settled(merged, own) and own.exact and own.replayed == 2
    other = found("src/b.o")
    other.lines = {("f", "g", "f:1:2"): True, ("f", "x", "f:9:9"): True}
    both = ir.merge([own, other])
    assert not ir._settled(both, own)  # another module's line names its function f
    untouched = ModuleLines("src/c.o", 0.0, reference=True, exact_alone=True)
    untouched.callers = {"main"}
    assert ir._settled(both, untouched) and untouched.untouched and untouched.exact
    reached = ModuleLines("src/d.o", 0.0, reference=True, exact_alone=True)
    reached.callers = {"k"}  # named only by a key's outermost frame
    assert not ir._settled(both, reached) and not reached.untouched
