"""The tuning table, identities and states (mlgo_env.tuning.table, identity, state): no clang."""
import base64
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


STREAMS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "streams")


def recorded_observations(path):
    """The observations of a recorded clang stream (docs: include/mlgo/protocol/training_log.h)
    as {feature: array}: a JSON header line, then context lines and observation records
    (a JSON line, the features' raw bytes in header order, a newline)."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"\n")
    specs = json.loads(data[:end])["features"]
    kinds = {"int64_t": np.int64, "float": np.float32, "double": np.float64, "int32_t": np.int32}
    sizes = [int(np.prod(s["shape"])) * np.dtype(kinds[s["type"]]).itemsize for s in specs]
    out, at = [], end + 1
    while at < len(data):
        end = data.index(b"\n", at)
        record, at = json.loads(data[at:end]), end + 1
        if "observation" not in record:
            continue
        obs = {}
        for spec, size in zip(specs, sizes):
            obs[spec["name"]] = np.frombuffer(data[at:at + size], dtype=kinds[spec["type"]])
            at += size
        out.append(obs)
        at += 1  # the newline after the tensors
    return out


def test_site_keys_match_the_golden_keys_the_launcher_computes():
    # launch/stale_entry_test.cc checks the C++ side against the same file.
    observations = recorded_observations(os.path.join(STREAMS, "inlining.stream"))
    features = ident.site_features(ident.identity_features(list(observations[0])))
    assert "node_count" not in features and "edge_count" not in features
    assert len(features) == len(observations[0]) - 2
    keys = [ident.site_key(o, features).hex() for o in observations]
    with open(os.path.join(STREAMS, "inlining.sites")) as f:
        assert keys == f.read().split()
    moved = dict(observations[3], node_count=observations[3]["node_count"] + 5)
    assert ident.site_key(moved, features).hex() == keys[3]
    changed = dict(observations[3], callee_users=observations[3]["callee_users"] + 1)
    assert ident.site_key(changed, features).hex() != keys[3]


def test_inlining_records_site_keys_and_the_table_indexes_them(tmp_path):
    from mlgo_env.tuning.record import Recorder
    observations = recorded_observations(os.path.join(STREAMS, "inlining.stream"))
    features = ident.identity_features(list(observations[0]))
    rec = Recorder(lambda obs, info: int(obs["inlining_default"][0]), features, sites=True)
    for o in observations:
        rec(o, {})
    assert len(rec.sites) == len(observations) and all(len(k) == 8 for k in rec.sites)
    assert Recorder(lambda obs, info: 0, features).sites is None  # regalloc: none
    with_sites = Entry("src/a.o", rec.actions, rec.hash.first, rec.hash.hexdigest(), 10.0, 9.0,
                       "-Oz", sites=b"".join(rec.sites))
    write_table(str(tmp_path), "inlining", features, CLANG, [with_sites, entry("b.o", 2)])
    back = {e.module: e for e in read_entries(str(tmp_path))}
    assert back["src/a.o"] == with_sites and back["b.o"].sites is None
    index = json.loads((tmp_path / "module-index.json").read_text())
    assert index == {"format": "mlgo-env-tuning-index", "version": 1,
                     "modules": [{"module": "src/a.o", "opt": "-Oz", "first": rec.hash.first}]}
    path = tmp_path / "modules" / (ident.entry_key(rec.hash.first) + ".json")
    doc = json.loads(path.read_text())
    doc["entries"][0]["sites"] = base64.b64encode(bytes(80)).decode("ascii")
    path.write_text(json.dumps(doc))
    with pytest.raises(TableError, match="'sites' holds 80 bytes, not 8 per decision"):
        read_entries(str(tmp_path))
    write_table(str(tmp_path), "inlining", features, CLANG, [entry("b.o", 2)])
    assert not (tmp_path / "module-index.json").exists()  # no entry has site keys


def test_status_counts_stale_compiles_apart(tmp_path):
    from mlgo_env.tuning.status import log_lines
    log = tmp_path / "launch.log"
    lines = [{"source": "a.c", "output": "a.o", "outcome": "tuned", "module": "a.o", "why": ""},
             {"source": "b.c", "output": "b.o", "outcome": "stale", "module": "b.o",
              "why": "no tuned module makes this first decision", "from_entry": 7,
              "decisions": 9},
             {"source": "c.c", "output": "c.o", "outcome": "stale", "module": "c.o",
              "why": "module 'c.o' departs from its tuned stream", "from_entry": 3,
              "decisions": 3},
             {"source": "d.c", "output": "d.o", "outcome": "fallback", "module": "",
              "why": "no tuned module makes this first decision"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = list(log_lines(str(log)))
    assert out[0] == (f"launcher log {log}: 4 compiles, 1 with their tuned decisions, 2 "
                      "changed but keeping their unchanged call sites' (10 of 12 decisions), "
                      "0 without any decision to make, 1 fell back, 0 failed")
    assert out[1] == ("  kept by call site: b.c: 7 of 9 decisions from module 'b.o' (no tuned "
                      "module makes this first decision)")
    assert out[2].startswith("  kept by call site: c.c: 3 of 3 decisions")
    assert out[3] == "  fell back: d.c: no tuned module makes this first decision"
