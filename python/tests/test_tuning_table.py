"""The tuning table, identities and states (mlgo_env.tuning.table, identity, state): no clang."""
import hashlib
import json
import os

import numpy as np
import pytest

from mlgo_env.tuning import identity as ident
from mlgo_env.tuning import state as st
from mlgo_env.tuning.table import Entry, TableError, read_entries, read_manifest, write_table

CLANG = {"path": "/usr/bin/clang", "size": 1, "mtime_ns": 2, "version": "clang 22"}


def entry(module, first_byte, actions=(1, 0, 1)):
    first = hashlib.sha256(bytes([first_byte])).hexdigest()
    return Entry(module, list(actions), first, hashlib.sha256(b"s" + bytes([first_byte])).hexdigest(),
                 100.0, 90.0, "-Oz")


def test_round_trip_files_entries_by_first_key(tmp_path):
    entries = [entry("a.o", 1), entry("b.o", 2, (32, 0, 5))]
    assert write_table(str(tmp_path), "regalloc", ["mask", "weight"], CLANG, entries) == 2
    assert read_manifest(str(tmp_path))["features"] == ["mask", "weight"]
    back = {e.module: e for e in read_entries(str(tmp_path))}
    assert back["b.o"].actions == [32, 0, 5] and back["a.o"] == entries[0]
    names = sorted(os.listdir(tmp_path / "modules"))
    assert names == sorted(ident.entry_key(e.first) + ".json" for e in entries)
    # A rewrite without b.o removes its file.
    write_table(str(tmp_path), "regalloc", ["mask", "weight"], CLANG, entries[:1])
    assert [e.module for e in read_entries(str(tmp_path))] == ["a.o"]


def test_readers_refuse_broken_files_naming_them(tmp_path):
    write_table(str(tmp_path), "inlining", ["a"], CLANG, [entry("a.o", 1)])
    path = next((tmp_path / "modules").iterdir())
    text = path.read_text()
    path.write_text(text[:len(text) // 2])
    with pytest.raises(TableError, match=str(path)):
        read_entries(str(tmp_path))
    doc = json.loads(text)
    doc["entries"][0]["decisions"] = 4
    path.write_text(json.dumps(doc))
    with pytest.raises(TableError, match="says 4 decisions but holds 3"):
        read_entries(str(tmp_path))
    manifest = tmp_path / "tuning.json"
    m = json.loads(manifest.read_text())
    m["features"] = ["b", "a"]
    manifest.write_text(json.dumps(m))
    with pytest.raises(TableError, match="sorted list"):
        read_manifest(str(tmp_path))
    m["features"], m["version"] = ["a"], 2
    manifest.write_text(json.dumps(m))
    with pytest.raises(TableError, match="version 2"):
        read_manifest(str(tmp_path))


def test_stream_hash_is_sha256_of_sorted_identity_bytes():
    names = ["z", "a", "callee_embedding"]
    features = ident.identity_features(names)
    assert features == ["a", "z"]
    obs = [{"a": np.array([1, 2], dtype=np.int64), "z": np.array([0.5], dtype=np.float32),
            "callee_embedding": np.ones(3, dtype=np.float32)},
           {"a": np.array([3, 4], dtype=np.int64), "z": np.array([1.5], dtype=np.float32),
            "callee_embedding": np.zeros(3, dtype=np.float32)}]
    h = ident.StreamHash(features)
    for o in obs:
        h.add(o)
    raw = [o["a"].tobytes() + o["z"].tobytes() for o in obs]
    assert h.first == hashlib.sha256(raw[0]).hexdigest()
    digests = [hashlib.sha256(r).digest() for r in raw]
    assert h.hexdigest() == hashlib.sha256(digests[0] + digests[1]).hexdigest()
    assert h.count == 2
    with pytest.raises(KeyError, match="'z'"):
        ident.StreamHash(["z"]).add({"a": obs[0]["a"]})


def test_states_that_cannot_be_read_are_reported_not_trusted(tmp_path):
    st.save_state(str(tmp_path), "src/a.o", {"module": "src/a.o", "problem": "inlining",
                                              "identity": {"bitcode": "x"}, "status": "done",
                                              "entry": entry("src/a.o", 1).to_json()})
    st.save_state(str(tmp_path), "b.o", {"module": "b.o", "problem": "inlining",
                                         "identity": {}, "status": "sideways"})
    (tmp_path / "state" / "c.o.json").write_text("{")
    states, problems = st.load_states(str(tmp_path), "inlining")
    assert list(states) == ["src/a.o"]
    assert len(problems) == 2 and all("tuned again" in p for p in problems)
    assert st.load_states(str(tmp_path), "regalloc")[0] == {}


def test_opt_level_reads_as_the_launcher_does():
    assert ident.opt_level(["-cc1", "-Oz", "-emit-obj"]) == "-Oz"
    assert ident.opt_level(["-O2", "-c", "-O"]) == "-O1"
    assert ident.opt_level(["-O9"]) == "-O3"
    assert ident.opt_level(["-O02"]) == "-O2"
    assert ident.opt_level(["-c", "x.c"]) == "-O0"
