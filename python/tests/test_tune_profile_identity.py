"""The profile a module's compile reads, in its identity and its table entry
(mlgo_env.tuning.identity, table, record): no clang. The launcher's side of the same rules,
with the same digests, is launch/profile_identity_test.cc."""
import hashlib
import json
import os

import pytest

from mlgo_env.tuning import identity as ident
from mlgo_env.tuning.record import entry_of
from mlgo_env.tuning.table import Entry, TableError, read_entries, read_manifest, write_table

CLANG = {"path": "/usr/bin/clang", "size": 1, "mtime_ns": 2, "version": "clang 22"}
#: SHA-256 of b"abc", and of the digests of b"abc" and b"xyz\n" (the C++ test's constants)
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
BOTH = "4821aae845298030bb6de5aa1efbab741fc49303810bc16bab2e47462e7e0cb0"


def test_profile_files_follow_the_drivers_rules(tmp_path):
    d = str(tmp_path)
    assert ident.profile_files(["-O2", "-c", "a.c"], d) == (None, None)
    assert ident.profile_files(["-fprofile-instr-use=p"], d) == (f"{d}/p", None)
    assert ident.profile_files(["-fprofile-instrument-use-path=/abs/p"], d) == ("/abs/p", None)
    assert ident.profile_files(["-fprofile-use"], d)[0] == f"{d}/default.profdata"
    assert ident.profile_files(["-fprofile-instr-use"], d)[0] == f"{d}/default.profdata"
    os.mkdir(tmp_path / "dir")
    assert ident.profile_files(["-fprofile-use=dir"], d)[0] == f"{d}/dir/default.profdata"
    assert ident.profile_files(["-fprofile-use=a", "-fprofile-instr-use=b"], d)[0] == f"{d}/b"
    assert ident.profile_files(["-fprofile-use=a", "-fno-profile-use"], d) == (None, None)
    assert ident.profile_files(["-fprofile-instr-use=a", "-fno-profile-instr-use"], d) == \
        (None, None)
    assert ident.profile_files(["-fprofile-sample-use=s"], d) == (None, f"{d}/s")
    assert ident.profile_files(["-fauto-profile=s", "-fno-auto-profile"], d) == (None, None)
    assert ident.profile_files(["-fprofile-sample-use=s", "-fno-profile-sample-use"], d) == \
        (None, None)
    # cc1's flag that names the profile's kind is not a path
    assert ident.profile_files(["-fprofile-instrument-use=clang"], d) == (None, None)


def test_profile_identity_is_the_sha256_of_the_content(tmp_path):
    (tmp_path / "a.profdata").write_bytes(b"abc")
    (tmp_path / "s.prof").write_bytes(b"xyz\n")
    d = str(tmp_path)
    assert ident.profile_identity(["-O2"], d) is None
    assert ident.profile_identity(["-fprofile-use=a.profdata"], d) == ABC
    assert ident.profile_identity(["-fprofile-sample-use=a.profdata"], d) == ABC
    assert ident.profile_identity(["-fprofile-use=a.profdata", "-fprofile-sample-use=s.prof"],
                                  d) == BOTH
    (tmp_path / "a.profdata").write_bytes(b"abd")  # same path, other content
    assert ident.profile_identity(["-fprofile-use=a.profdata"], d) != ABC
    with pytest.raises(OSError) as raised:
        ident.profile_identity(["-fprofile-use=gone.profdata"], d)
    assert raised.value.filename == f"{d}/gone.profdata"


def corpus_module(corpus, name, args):
    os.makedirs(corpus, exist_ok=True)
    with open(os.path.join(corpus, name + ".bc"), "wb") as f:
        f.write(b"BC\xc0\xde" + name.encode())
    with open(os.path.join(corpus, name + ".cmd"), "wb") as f:
        f.write(b"\0".join(a.encode() for a in ["-cc1", "-O2"] + args))


def test_the_module_identity_holds_the_profile_its_command_reads(tmp_path):
    build, corpus = tmp_path / "build", str(tmp_path / "corpus")
    build.mkdir()
    (build / "p.profdata").write_bytes(b"abc")
    dirs = [f"-fdebug-compilation-dir={build}", f"-fcoverage-compilation-dir={build}"]
    corpus_module(corpus, "plain.o", dirs)
    corpus_module(corpus, "pgo.o", dirs + ["-fprofile-instrument-use=llvm",
                                            "-fprofile-instrument-use-path=p.profdata"])
    corpus_module(corpus, "gone.o", dirs + ["-fprofile-instrument-use-path=gone.profdata"])
    # a module without a profile keeps the identity it always had (no retune on upgrade)
    assert set(ident.module_identity(corpus, "plain.o")) == {"bitcode", "command"}
    before = ident.tuned_identity(corpus, "pgo.o", "clang 22")
    assert before["profile"] == ABC  # resolved against the compile's directory
    (build / "p.profdata").write_bytes(b"another run")
    after = ident.tuned_identity(corpus, "pgo.o", "clang 22")
    assert after != before and after["bitcode"] == before["bitcode"]
    assert ident.module_profile(corpus, "gone.o") == \
        f"unreadable: {build}/gone.profdata: No such file or directory"


def test_a_front_end_profile_newer_than_the_capture_is_stale(tmp_path):
    # -fprofile-instr-generate's profile is read into the bitcode when the source is
    # compiled; a corpus recompile never reads it again, so a newer one needs a new capture
    build, corpus = tmp_path / "build", str(tmp_path / "corpus")
    build.mkdir()
    (build / "p.profdata").write_bytes(b"abc")
    args = [f"-fcoverage-compilation-dir={build}", "-fprofile-instrument-use=clang",
            "-fprofile-instrument-use-path=p.profdata"]
    corpus_module(corpus, "fe.o", args)
    corpus_module(corpus, "ir.o", args[:1] + ["-fprofile-instrument-use=llvm"] + args[2:])
    bc = os.path.join(corpus, "fe.o.bc")
    captured = os.stat(bc).st_mtime_ns
    os.utime(build / "p.profdata", ns=(captured - 10**9, captured - 10**9))
    assert ident.module_profile(corpus, "fe.o") == ABC
    os.utime(build / "p.profdata", ns=(captured + 10**9, captured + 10**9))
    assert ident.module_profile(corpus, "fe.o") == (
        f"stale: {build}/p.profdata changed after the corpus was captured (a front-end "
        "profile is in the bitcode: capture the corpus again with it)")
    assert ident.module_profile(corpus, "ir.o") == ABC  # read by every recompile
    with pytest.raises(ValueError, match="its profile is stale: "):
        rec = _Recorder()
        rec.hash = _Recorded()
        entry_of(_Tuner(), rec, _Result(), "-O2", ident.module_profile(corpus, "fe.o"))


def test_a_relative_compilation_directory_falls_back_to_compile_commands(tmp_path):
    build, corpus = tmp_path / "build", str(tmp_path / "corpus")
    build.mkdir()
    (build / "p.profdata").write_bytes(b"abc")
    corpus_module(corpus, "x.o", ["-fdebug-compilation-dir=.", "-fcoverage-compilation-dir=.",
                                  "-fprofile-instrument-use-path=p.profdata"])
    with open(os.path.join(corpus, "compile_commands.json"), "w") as f:
        json.dump([{"directory": str(build), "arguments": [
            "clang-22", "-ffile-compilation-dir=.", "-fprofile-instr-use=p.profdata", "-c",
            "x.c", "-o", "x.o"]}], f)
    assert ident.module_profile(corpus, "x.o") == ABC


def entry(module, profile=""):
    first = hashlib.sha256(module.encode()).hexdigest()
    return Entry(module, [1, 0], first, hashlib.sha256(first.encode()).hexdigest(), 10.0, 9.0,
                 "-O2", profile)


def test_entries_and_manifest_carry_profiles(tmp_path):
    d = str(tmp_path)
    write_table(d, "regalloc", ["a"], CLANG, [entry("a.o", ABC), entry("b.o"), entry("c.o", ABC)])
    assert read_manifest(d)["profiles"] == ["", ABC]
    back = {e.module: e for e in read_entries(d)}
    assert back["a.o"].profile == ABC and back["b.o"].profile == ""
    # an entry of an older table, without the field, was tuned without a profile
    path = next((tmp_path / "modules").iterdir())
    doc = json.loads(path.read_text())
    del doc["entries"][0]["profile"]
    path.write_text(json.dumps(doc))
    assert all(e.profile in ("", ABC) for e in read_entries(d))
    doc["entries"][0]["profile"] = "ABC"
    path.write_text(json.dumps(doc))
    with pytest.raises(TableError, match="profile must be \"\" or a SHA-256 in hex"):
        read_entries(d)
    manifest = tmp_path / "tuning.json"
    m = json.loads(manifest.read_text())
    for bad, message in (([ABC, ""], "sorted and distinct"), (["x"], "SHA-256 digests"),
                         ("", "must be a list")):
        m["profiles"] = bad
        manifest.write_text(json.dumps(m))
        with pytest.raises(TableError, match=message):
            read_manifest(d)
    del m["profiles"]  # older tables
    manifest.write_text(json.dumps(m))
    assert read_manifest(d)["problem"] == "regalloc"


class _Tuner:
    module, best_score = "m.o", 5.0


class _Recorded:
    first, actions = hashlib.sha256(b"x").hexdigest(), [1]

    def hexdigest(self):
        return hashlib.sha256(b"y").hexdigest()


class _Recorder:
    actions, hash, sites = [1], None, None


class _Result:
    policy_score, default_score = 5.0, 6.0


def test_the_record_writes_the_profile_and_refuses_an_unreadable_one():
    rec = _Recorder()
    rec.hash = _Recorded()
    assert entry_of(_Tuner(), rec, _Result(), "-O2", ABC).profile == ABC
    assert entry_of(_Tuner(), rec, _Result(), "-O2", None).profile == ""
    with pytest.raises(ValueError, match="its profile is unreadable: /p: No such file"):
        entry_of(_Tuner(), rec, _Result(), "-O2", "unreadable: /p: No such file or directory")


def test_the_build_directory_is_not_part_of_a_modules_identity(tmp_path):
    """The same compile captured in two checkouts is one module (its bitcode and flags are
    the same; only the directory debug and coverage data name differs); another flag is
    another module."""
    ids = []
    for name, extra in (("one", []), ("two", []), ("three", ["-DX"])):
        build, corpus = tmp_path / name / "build", str(tmp_path / name / "corpus")
        build.mkdir(parents=True)
        corpus_module(corpus, "a.o", [f"-fdebug-compilation-dir={build}",
                                      "-fcoverage-compilation-dir", str(build),
                                      f"-I{build}/include"] + extra)
        ids.append(ident.module_identity(corpus, "a.o"))
    assert ids[0] == ids[1]
    assert ids[2]["command"] != ids[0]["command"] and ids[2]["bitcode"] == ids[0]["bitcode"]
