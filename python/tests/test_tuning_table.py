"""The tuning table, identities and states (mlgo_env.tuning.table, identity, state): no clang.

The table's reader and writer and the stream identity are the C++ ones, through the core;
the golden tables of tests/data/tables/ (manifest.json) hold the package's wrappers to what
table/table_golden_test.cc holds the C++ to: each valid table reads as listed and is, byte
for byte, what the writer writes for what it holds; the recorded stream hashes to its
entry; each invalid manifest and entries file is refused with the listed error (the module
index is the launcher's alone: the package has no reader of it).
"""
import base64
import hashlib
import json
import os
import pickle
import shutil

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


DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data")
GOLDEN = os.path.join(DATA, "tables")
with open(os.path.join(GOLDEN, "manifest.json"), encoding="utf-8") as _f:
    TABLES = json.load(_f)


def as_listed(e):
    """An entry as the golden manifest lists it (sites: hex of each 8-byte key)."""
    sites = None if e.sites is None else [e.sites[i:i + 8].hex() for i in range(0, len(e.sites), 8)]
    return {"module": e.module, "opt": e.opt, "actions": e.actions, "first": e.first,
            "stream": e.stream, "default_score": e.default_score, "tuned_score": e.tuned_score,
            "profile": e.profile, "sites": sites, "priorities": e.priorities}


def files_under(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, names in os.walk(folder) for f in names)


@pytest.mark.parametrize("case", TABLES["valid"], ids=lambda c: c["table"])
def test_golden_tables_read_as_listed(case):
    folder = os.path.join(GOLDEN, case["table"])
    assert read_manifest(folder) == case["manifest"]
    assert [as_listed(e) for e in read_entries(folder)] == case["entries"]


@pytest.mark.parametrize("case", [c for c in TABLES["valid"] if c["written_by"] == "writer"],
                         ids=lambda c: c["table"])
def test_golden_tables_are_what_the_writer_writes_for_them(case, tmp_path):
    folder = os.path.join(GOLDEN, case["table"])
    m = read_manifest(folder)
    assert write_table(str(tmp_path), m["problem"], m["features"], m["clang"],
                       read_entries(folder)) == len(case["entries"])
    assert files_under(str(tmp_path)) == files_under(folder)
    for name in files_under(folder):
        with open(os.path.join(folder, name), "rb") as a, open(tmp_path / name, "rb") as b:
            assert a.read() == b.read(), name


def test_the_recorded_stream_hashes_to_its_golden_entry():
    case = TABLES["valid"][0]
    of = case["stream_of"]
    observations = recorded_observations(os.path.join(DATA, of["stream"]))
    features = case["manifest"]["features"]
    h, sites = ident.StreamHash(features), []
    for o in observations:
        h.add(o)
        sites.append(ident.site_key(o, ident.site_features(features)).hex())
    want = next(e for e in case["entries"] if e["module"] == of["module"])
    assert (h.first, h.hexdigest(), sites) == (want["first"], want["stream"], want["sites"])
    again = pickle.loads(pickle.dumps(h))  # plain data: a record episode may run on a worker
    assert again.hexdigest() == h.hexdigest() and again.digests == h.digests


@pytest.mark.parametrize("case", [c for c in TABLES["invalid"] if c["kind"] != "index"],
                         ids=lambda c: c["file"])
def test_golden_invalid_files_are_refused_with_the_listed_error(case, tmp_path):
    source = os.path.join(GOLDEN, case["file"])
    if case["kind"] == "manifest":
        path = tmp_path / "tuning.json"
        shutil.copy(source, path)
        with pytest.raises(TableError) as refused:
            read_manifest(str(tmp_path))
    else:
        path = tmp_path / "modules" / (case["key"] + ".json")
        path.parent.mkdir()
        shutil.copy(source, path)
        with pytest.raises(TableError) as refused:
            read_entries(str(tmp_path))
    assert str(refused.value).startswith(f"tuning file '{path}': {case['error']}")


def test_an_entry_kept_in_a_state_is_checked_as_in_a_table(tmp_path):
    e = entry("a.o", 1)
    assert Entry.from_json(e.to_json(), "state.json") == e
    with pytest.raises(TableError, match="^tuning file 'state.json': entry 'a.o' says 4 "):
        Entry.from_json(dict(e.to_json(), decisions=4), "state.json")
    with pytest.raises(TableError, match="an entry is not an object"):
        Entry.from_json(["a.o"], "state.json")
    with pytest.raises(ValueError, match="a.o: an action outside 0..255"):
        write_table(str(tmp_path / "t"), "inlining", ["a"], CLANG, [entry("a.o", 1, (256,))])
    assert not (tmp_path / "t").exists()


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
    assert len(features) == len(observations[0]) - 6  # the module-wide and the caller's
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
    assert index == {"format": "mlgo-env-tuning-index", "version": 1,  # every entry, by name
                     "modules": [{"module": "b.o", "opt": "-Oz", "first": entry("b.o", 2).first},
                                 {"module": "src/a.o", "opt": "-Oz", "first": rec.hash.first}]}
    path = tmp_path / "modules" / (ident.entry_key(rec.hash.first) + ".json")
    doc = json.loads(path.read_text())
    doc["entries"][0]["sites"] = base64.b64encode(bytes(80)).decode("ascii")
    path.write_text(json.dumps(doc))
    with pytest.raises(TableError, match="'src/a.o': sites holds 80 bytes, not 8 per decision"):
        read_entries(str(tmp_path))
    write_table(str(tmp_path), "inlining", features, CLANG, [entry("b.o", 2)])
    assert not (tmp_path / "module-index.json").exists()  # no entry has site keys


def test_priorities_round_trip_and_index_the_entry(tmp_path):
    joint = entry("sub/b.o", 3)
    joint.priorities = {"questions": 7, "functions": {"main": {"0": 16.0, "12": 0.0625},
                                                      "f": {}}}
    write_table(str(tmp_path), "regalloc", ["mask", "weight"], CLANG, [entry("a.o", 2), joint])
    back = {e.module: e for e in read_entries(str(tmp_path))}
    assert back["sub/b.o"] == joint and back["a.o"].priorities is None
    assert Entry.from_json(joint.to_json(), "x") == joint
    index = json.loads((tmp_path / "module-index.json").read_text())
    assert [r["module"] for r in index["modules"]] == ["a.o", "sub/b.o"]  # all, by name
    for bad, message in [({"questions": 1}, "needs 'questions' and 'functions'"),
                         ({"questions": 1, "functions": {"f": {"x": 1.0}}}, "step 'x' is not"),
                         ({"questions": 1, "functions": {"f": {"1": -1.0}}},
                          "step 1: the multiplier must be a finite number >= 0"),
                         ({"questions": "7", "functions": {}}, "'questions' must be a count"),
                         ({"questions": 1, "functions": {"f": {"012": 1.0}}},
                          "step '012' is not an index"),
                         ({"questions": 1, "functions": {"f": {"1": "x"}}},
                          "the multiplier is not a number")]:
        joint.priorities = bad
        with pytest.raises(ValueError, match=message):
            write_table(str(tmp_path), "regalloc", ["mask", "weight"], CLANG, [joint])
    assert {e.module for e in read_entries(str(tmp_path))} == {"a.o", "sub/b.o"}  # unchanged


def test_status_names_entries_and_compiles_with_priorities(tmp_path):
    from mlgo_env.tuning.status import log_lines, status_lines
    joint = entry("sub/b.o", 3)
    joint.priorities = {"questions": 7, "functions": {}}
    write_table(str(tmp_path), "regalloc", ["mask", "weight"], CLANG, [entry("a.o", 2), joint])
    lines = list(status_lines(str(tmp_path), None, None))
    assert "  1 of them with register priorities (tune priorities): sub/b.o" in lines
    log = tmp_path / "launch.log"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"source": "a.c", "output": "a.o", "outcome": "tuned", "module": "a.o", "why": ""},
        {"source": "b.c", "output": "sub/b.o", "outcome": "tuned", "module": "sub/b.o",
         "why": "", "priorities": 7}]) + "\n")
    assert ("  with register priorities: 1 of the tuned compiles (7 priority questions "
            "answered from the table)") in list(log_lines(str(log)))


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
