"""The tuning table: the decisions `python -m mlgo_env.tune` found, as the launcher reads them.

Layout of a tuning directory (docs/tuning-format.md is the specification)::

    DIR/tuning.json              the manifest: format, version, problem, identity features,
                                 the compiler it was made with, module count
    DIR/modules/<key>.json       the entries whose first observation hashes to <key>
                                 (16 hex digits; usually one entry per file)
    DIR/module-index.json        module, opt and first hash of each entry with site keys
    DIR/state/<module>.json      the search state of each module (tune's own; incremental
                                 reruns and --resume read it; the launcher never does)
    DIR/report.csv               module, default score, tuned score, reward, status, note

An entry: ``{"module", "opt" (the optimisation level it was tuned at, e.g. "-Oz"),
"decisions", "actions" (base64 of one byte per decision), "first"
(hex SHA-256 of the first observation), "stream" (hex SHA-256 of the whole stream),
"default_score", "tuned_score", "profile" (the profile identity of the module's compile,
mlgo_env.tuning.identity.profile_identity; "" when it reads none, also when absent, as in
tables older than the field)}``. The manifest's "profiles" lists the entries' profile
identities, sorted and distinct (the launcher falls back at once on a compile whose profile
is not among them). Inlining entries also hold "sites" (base64 of one 8-byte site key
per decision, mlgo_env.tuning.identity.site_key; absent in older tables): the launcher's
stale route answers a changed module's unchanged call sites from them.

Writers replace files atomically (write to a temporary name, then rename), so a reader
never sees half a file. Readers raise :class:`TableError` naming the file for anything
malformed. Not thread-safe; one writer per directory.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..files import write_atomic  # noqa: F401 - the tuning layer's writers
from .identity import SITE_KEY_BYTES, entry_key, is_profile_digest

FORMAT = "mlgo-env-tuning"
ENTRIES_FORMAT = "mlgo-env-tuning-entries"
INDEX_FORMAT = "mlgo-env-tuning-index"
#: the index of entries by module (for the launcher's stale route)
INDEX_FILE = "module-index.json"
VERSION = 1
PROBLEMS = ("inlining", "regalloc")
#: the largest action a table can hold (one byte per decision; regalloc's is 32)
MAX_ACTION = 255


class TableError(ValueError):
    """A tuning directory or one of its files is missing, malformed or of another kind."""


@dataclass
class Entry:
    module: str
    actions: list[int]
    first: str
    stream: str
    default_score: float
    tuned_score: float
    #: the optimisation level tune compiled it at ("-Oz"); a compile at another misses
    opt: str = "-O0"
    #: the profile identity of its compile ("" = no profile); a compile reading another misses
    profile: str = ""
    #: inlining: one site key per decision (identity.site_key, SITE_KEY_BYTES each),
    #: concatenated; None in tables older than the field (no stale route for the entry)
    sites: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "opt": self.opt, "decisions": len(self.actions),
                "actions": base64.b64encode(bytes(self.actions)).decode("ascii"),
                "first": self.first, "stream": self.stream,
                "default_score": self.default_score, "tuned_score": self.tuned_score,
                "profile": self.profile,
                **({} if self.sites is None else
                   {"sites": base64.b64encode(self.sites).decode("ascii")})}

    @staticmethod
    def from_json(value: Any, where: str) -> "Entry":
        if not isinstance(value, dict):
            raise TableError(f"{where}: an entry is not an object")
        kinds = {"module": str, "opt": str, "decisions": int, "actions": str, "first": str,
                 "stream": str, "default_score": (int, float), "tuned_score": (int, float)}
        for key, kind in kinds.items():  # the C++ reader's types, no coercion
            if key not in value:
                raise TableError(f"{where}: an entry has no '{key}'")
            if not isinstance(value[key], kind) or isinstance(value[key], bool):
                raise TableError(f"{where}: an entry's '{key}' is of the wrong type")
        try:
            actions = list(base64.b64decode(value["actions"], validate=True))
        except ValueError as e:
            raise TableError(f"{where}: a malformed entry: actions: {e}") from e
        profile = value.get("profile", "")
        if profile != "" and not is_profile_digest(profile):
            raise TableError(f"{where}: entry '{value['module']}': profile must be \"\" or a "
                             "SHA-256 in hex")
        entry = Entry(value["module"], actions, value["first"], value["stream"],
                      float(value["default_score"]), float(value["tuned_score"]), value["opt"],
                      profile, _sites_of(value, where))
        decisions = value["decisions"]
        if decisions != len(actions):
            raise TableError(f"{where}: entry '{entry.module}' says {decisions} decisions "
                             f"but holds {len(actions)} actions")
        if entry.sites is not None and len(entry.sites) != SITE_KEY_BYTES * decisions:
            raise TableError(f"{where}: entry '{entry.module}': 'sites' holds "
                             f"{len(entry.sites)} bytes, not {SITE_KEY_BYTES} per decision")
        for name in ("first", "stream"):
            digest = getattr(entry, name)
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise TableError(f"{where}: entry '{entry.module}': '{name}' is not a "
                                 "SHA-256 in hex")
        return entry


def _sites_of(value: dict, where: str) -> bytes | None:
    """An entry's optional 'sites', decoded; TableError when it is not base64."""
    if "sites" not in value:
        return None
    if not isinstance(value["sites"], str):
        raise TableError(f"{where}: an entry's 'sites' is of the wrong type")
    try:
        return base64.b64decode(value["sites"], validate=True)
    except ValueError as e:
        raise TableError(f"{where}: a malformed entry: sites: {e}") from e


def _write_index(directory: str, entries: list[Entry]) -> None:
    """DIR/module-index.json: the module, opt and first hash of every entry with site keys,
    sorted by module (the launcher finds a changed module's entry there, by its object
    path); removed when no entry has them."""
    path = os.path.join(directory, INDEX_FILE)
    rows = sorted(({"module": e.module, "opt": e.opt, "first": e.first}
                   for e in entries if e.sites is not None), key=lambda r: r["module"])
    if rows:
        write_atomic(path, json.dumps({"format": INDEX_FORMAT, "version": VERSION,
                                       "modules": rows}) + "\n")
    elif os.path.exists(path):
        os.unlink(path)


def write_table(directory: str, problem: str, features: Sequence[str], clang: dict,
                entries: Iterable[Entry]) -> int:
    """Writes the manifest and every entry file of `directory`, removing entry files no
    entry needs any more. Returns the number of entries."""
    if problem not in PROBLEMS:
        raise ValueError(f"no tuning table for problem '{problem}'")
    by_key: dict[str, list[Entry]] = {}
    for e in entries:
        if any(a < 0 or a > MAX_ACTION for a in e.actions):
            raise ValueError(f"{e.module}: an action outside 0..{MAX_ACTION}")
        by_key.setdefault(entry_key(e.first), []).append(e)
    modules_dir = os.path.join(directory, "modules")
    os.makedirs(modules_dir, exist_ok=True)
    for key, group in by_key.items():
        group.sort(key=lambda e: e.module)
        write_atomic(os.path.join(modules_dir, key + ".json"),
                     json.dumps({"format": ENTRIES_FORMAT, "version": VERSION,
                                 "entries": [e.to_json() for e in group]}) + "\n")
    for name in os.listdir(modules_dir):
        if name.endswith(".json") and name[:-5] not in by_key:
            os.unlink(os.path.join(modules_dir, name))
    _write_index(directory, [e for group in by_key.values() for e in group])
    manifest = {"format": FORMAT, "version": VERSION, "problem": problem,
                "features": list(features), "clang": clang,
                "modules": sum(len(g) for g in by_key.values()),
                "profiles": sorted({e.profile for g in by_key.values() for e in g})}
    write_atomic(os.path.join(directory, "tuning.json"), json.dumps(manifest, indent=1) + "\n")
    return manifest["modules"]


def _load_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError as e:
        raise TableError(f"{path}: no such file") from e
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TableError(f"{path}: not a tuning file: {e}") from e


def read_manifest(directory: str) -> dict[str, Any]:
    """The manifest of `directory`, checked; TableError naming the file otherwise."""
    path = os.path.join(directory, "tuning.json")
    m = _load_json(path)
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise TableError(f"{path}: not a tuning manifest (format is not '{FORMAT}')")
    if m.get("version") != VERSION:
        raise TableError(f"{path}: version {m.get('version')!r}; this reader knows {VERSION}")
    if m.get("problem") not in PROBLEMS:
        raise TableError(f"{path}: unknown problem {m.get('problem')!r}")
    features = m.get("features")
    if not isinstance(features, list) or not features or \
            not all(isinstance(f, str) for f in features) or features != sorted(set(features)):
        raise TableError(f"{path}: 'features' must be a sorted list of distinct names")
    clang = m.get("clang")
    if not isinstance(clang, dict) or not isinstance(clang.get("path"), str) or \
            not isinstance(clang.get("version"), str) or \
            not all(isinstance(clang.get(k), int) for k in ("size", "mtime_ns")) or \
            clang["size"] < 0:
        raise TableError(f"{path}: 'clang' needs path, size (not negative), mtime_ns and version")
    profiles = m.get("profiles", [])
    if not isinstance(profiles, list):
        raise TableError(f"{path}: 'profiles' must be a list")
    if not all(p == "" or is_profile_digest(p) for p in profiles):
        raise TableError(f"{path}: 'profiles' must hold \"\" or SHA-256 digests in hex")
    if profiles != sorted(set(profiles)):
        raise TableError(f"{path}: 'profiles' must be sorted and distinct")
    return m


def read_entries(directory: str) -> list[Entry]:
    """Every entry of `directory`; TableError naming the first bad file."""
    modules_dir = os.path.join(directory, "modules")
    out: list[Entry] = []
    if not os.path.isdir(modules_dir):
        return out
    for name in sorted(os.listdir(modules_dir)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(modules_dir, name)
        doc = _load_json(path)
        if not isinstance(doc, dict) or doc.get("format") != ENTRIES_FORMAT or \
                doc.get("version") != VERSION or not isinstance(doc.get("entries"), list):
            raise TableError(f"{path}: not a tuning entries file of version {VERSION}")
        for value in doc["entries"]:
            e = Entry.from_json(value, path)
            if entry_key(e.first) != name[:-5]:
                raise TableError(f"{path}: entry '{e.module}' belongs in "
                                 f"{entry_key(e.first)}.json")
            out.append(e)
    return out
