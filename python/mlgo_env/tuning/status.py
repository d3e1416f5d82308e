"""How much of a build a tuning table still covers (`python -m mlgo_env.tune status`).

Two views, each a few lines of text:

- against a newer corpus of the project (``--corpus``): each of its modules is *tuned*
  (same bitcode and command as when tuned, with an entry: the build gets exactly the
  tuned object), *kept across an edit* (edited, but a retune found its old decisions give
  the same stream: mlgo_env.tuning.carry), *clang's* (unchanged, but nothing beat clang's
  own decisions), *profile changed* (its compile reads another profile's content, or a
  profile where it read none, or none where it read one: the launcher falls back; tune
  again), *changed* (same name, other bitcode or command: the launcher applies the
  entry if the stream is still the same, else, with site keys, the tuned decisions of its
  unchanged call sites; tune again) or *new*; tuned modules the
  corpus no longer has are *gone*. Shares are of modules and of clang's score.
- from the launcher's log (one JSON line per compile the launcher took; the last line of
  each object counts, or of each source when the compile named no object): compiles that
  got their tuned decisions, those whose module changed but kept the tuned decisions of its
  unchanged call sites (``stale``: how many of their decisions came from the entry), those
  without a decision to make, those that fell back with the launcher's reason and those that
  failed, each named. A source of a compile-and-link (its line has ``linked_into``) counts
  apart from a ``-c`` of the same module: ``src.c (linked into lib.so)``.

With an inline-replay file (python -m mlgo_env.tune replay-file), a line says whether the
file is still the one tune wrote (its SHA-256 is in inline-replay.json). After
``python -m mlgo_env.tune pick``, a line says which table its workload chose and what each
executed (DIR/workload.json).

Raises TableError for a table, log or replay file that cannot be read or was altered.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from .. import episodes as ep
from .identity import is_profile_digest, tuned_identity
from .state import load_states
from .table import TableError, read_entries, read_manifest


def status_lines(tuning: str, corpus: str | None, log: str | None) -> Iterator[str]:
    manifest = read_manifest(tuning)
    entries = {e.module: e for e in read_entries(tuning)}
    states, problems = load_states(tuning, manifest["problem"])
    yield (f"tuning {tuning}: {manifest['problem']}, {len(entries)} modules with tuned "
           f"decisions, made with {manifest['clang'].get('version', '?')}")
    for line in problems:
        yield f"  {line}"
    if manifest["problem"] == "regalloc":
        yield score_line(states)
        joint = sorted(m for m, e in entries.items() if e.priorities is not None)
        if joint:
            yield (f"  {len(joint)} of them with register priorities (tune priorities): "
                   f"{', '.join(joint[:8])}{', ...' if len(joint) > 8 else ''}")
    yield from replay_file_lines(tuning)
    yield from workload_lines(tuning)
    if corpus:
        yield from corpus_lines(corpus, entries, states, manifest["clang"].get("version", ""))
    log = log or os.path.join(tuning, "launch.log")
    if os.path.exists(log):
        yield from log_lines(log)
    elif corpus is None:
        yield f"no launcher log at {log} (build with mlgo-env-launch --tuning={tuning})"


#: what each regalloc score counts, as `tune status` says it
SCORES = {"llvm": "LLVM's weighting: reloads 4, spills 1, copies 0.2, folded ones as "
                  "the others, each times its block's frequency",
          "instructions": "spills + reloads + copies, folded ones 0, each times its "
                          "block's frequency",
          "executed": "every instruction of the object, each times its block's frequency "
                      "and its function's profile entry count"}


def score_line(states: dict) -> str:
    """Which score the regalloc search lowered, per module state (a state's identity holds
    "score" when it is not LLVM's; several when modules were searched with different ones)."""
    counts: dict[str, int] = {}
    for s in states.values():
        name = s["identity"].get("score") or "llvm"
        counts[name] = counts.get(name, 0) + 1
    if not counts:
        return "score: no module searched yet"
    return "score: " + "; ".join(
        f"{name} ({SCORES.get(name, 'unknown')}): {n} module{'s' if n != 1 else ''}"
        for name, n in sorted(counts.items()))


def replay_file_lines(tuning: str) -> Iterator[str]:
    """The inline-replay file against what tune wrote (its report keeps the file's
    SHA-256: clang reads a line cut after " at callsite " as another key, silently)."""
    from .inline_replay import check_replay_file
    report = os.path.join(tuning, "inline-replay.json")
    if not os.path.exists(report):
        return
    summary = check_replay_file(tuning)  # TableError (a ValueError) if it differs
    link = f", link flags: {os.path.join(tuning, 'inline-replay.ldflags')}" \
        if summary.get("thinlto") else ""
    drift = f" and {summary['drift_lines']} drift lines" if summary.get("drift_lines") else ""
    yield (f"inline-replay file: {summary['lines']} lines{drift}, as written; exact for "
           f"{summary['exact']} of {summary['modules']} modules when written "
           f"(flags: {os.path.join(tuning, 'inline-replay.flags')}{link})")


def workload_lines(tuning: str) -> Iterator[str]:
    """What `tune pick` measured (DIR/workload.json), in one line."""
    path = os.path.join(tuning, "workload.json")
    if not os.path.exists(path):
        return
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        runs = {r["name"]: int(r["instructions"]) for r in doc["runs"]}
        chosen, tuned = doc["chosen"], runs["tuned"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TableError(f"workload pick report '{path}' is unreadable: {e}") from None
    others = ", ".join(f"{n} {c:,}" for n, c in runs.items() if n not in (chosen, "tuned"))
    yield (f"workload pick: the {chosen} table's workload executed {runs[chosen]:,} "
           f"instructions, the table as tuned {tuned:,} ({runs[chosen] / tuned - 1:+.2%}); "
           f"{others} ({path})")


def corpus_lines(corpus: str, entries: dict, states: dict, clang_version: str
                 ) -> Iterator[str]:
    kinds: dict[str, list[str]] = {"tuned": [], "kept across an edit": [], "clang's": [],
                                   "profile changed": [], "changed": [], "new": []}
    profiles: dict[str, tuple[str | None, str | None]] = {}
    weight: dict[str, float] = {k: 0.0 for k in kinds}
    modules = ep.corpus_modules(corpus)
    for m in modules:
        s = states.get(m)
        if s is None:
            kind = "new"
        elif s["identity"] != (now := tuned_identity(corpus, m, clang_version,
                                                     s["identity"].get("score"))):
            kind = "changed"
            if s["identity"].get("profile") != now.get("profile"):
                kind = "profile changed"
                profiles[m] = (s["identity"].get("profile"), now.get("profile"))
        elif m in entries:
            kind = "kept across an edit" if s.get("carried") else "tuned"
        else:
            kind = "clang's"
        kinds[kind].append(m)
        weight[kind] += float((s or {}).get("default_score") or 0.0)
    gone = sorted(set(entries) - set(modules))
    tuned_weight = sum(float(s.get("default_score") or 0.0) for s in states.values()) or 1.0
    clangs = len(kinds["clang's"])
    tuned = len(kinds["tuned"]) + len(kinds["kept across an edit"])
    share = (weight["tuned"] + weight["kept across an edit"]) / tuned_weight
    yield (f"corpus {corpus}: {len(modules)} modules: {tuned} tuned "
           f"({share:.1%} of the tuned score; {len(kinds['kept across an edit'])} of them "
           f"kept across an edit by a retune), {clangs} "
           f"unchanged with clang's own decisions, {len(kinds['profile changed'])} with "
           f"another profile, {len(kinds['changed'])} changed, "
           f"{len(kinds['new'])} new; {len(gone)} tuned modules gone")
    for m in kinds["kept across an edit"]:
        yield f"  kept across an edit: {m} (its old decisions gave the same stream)"
    for m in kinds["profile changed"]:
        was, now_reads = profiles[m]
        yield (f"  profile changed: {m} (tuned with {_profile(was)}, its compile now reads "
               f"{_profile(now_reads)}: the build falls back to clang's decisions or --policy; "
               "tune again)")
    for m in kinds["changed"]:
        rest = ("the tuned decisions of its unchanged call sites, clang's or --policy's for "
                "the rest" if getattr(entries.get(m), "sites", None) is not None
                else "clang's decisions or --policy")
        yield (f"  changed: {m} (the launcher applies its entry if the compiler's stream is "
               f"unchanged, else {rest}; tune again)")
    for m in kinds["new"]:
        yield f"  new: {m} (the build falls back to clang's decisions or --policy)"
    for m in gone:
        yield f"  gone: {m}"


def _profile(identity: str | None) -> str:
    """A module identity's "profile" as status lines show it."""
    if identity is None:
        return "no profile"
    return f"profile {identity[:12]}" if is_profile_digest(identity) else identity


def _named(record: dict) -> str:
    """A log line's source as status names it (a compile-and-link's says what it links)."""
    into = record.get("linked_into")
    return f"{record.get('source')} (linked into {into})" if into else str(record.get("source"))


def log_lines(log: str) -> Iterator[str]:
    last: dict[tuple[str, str], dict] = {}
    with open(log, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = (record.get("output") or record["source"], record.get("linked_into", ""))
                last[key] = record
            except (ValueError, KeyError, TypeError, AttributeError):
                raise TableError(f"{log}:{n}: not a launcher log line") from None
    tuned = [r for r in last.values() if r.get("outcome") == "tuned"]
    stale = [r for r in last.values() if r.get("outcome") == "stale"]
    plain = [r for r in last.values() if r.get("outcome") == "no-decisions"]
    failed = [r for r in last.values() if r.get("outcome") == "failed"]
    other = [r for r in last.values()
             if r.get("outcome") not in ("tuned", "stale", "no-decisions", "failed")]
    kept = sum(int(r.get("from_entry") or 0) for r in stale)
    asked = sum(int(r.get("decisions") or 0) for r in stale)
    yield (f"launcher log {log}: {len(last)} compiles, {len(tuned)} with their tuned "
           f"decisions, {len(stale)} changed but keeping their unchanged call sites' "
           f"({kept} of {asked} decisions), {len(plain)} without any decision to make, "
           f"{len(other)} fell back, {len(failed)} failed")
    joint = [r for r in tuned if r.get("priorities")]
    if joint:
        yield (f"  with register priorities: {len(joint)} of the tuned compiles "
               f"({sum(int(r['priorities']) for r in joint)} priority questions answered "
               "from the table)")
    for r in sorted(stale, key=_named):
        yield (f"  kept by call site: {_named(r)}: {r.get('from_entry')} of "
               f"{r.get('decisions')} decisions from module '{r.get('module')}' "
               f"({r.get('why', '')})")
    for r in sorted(other, key=_named):
        yield f"  fell back: {_named(r)}: {r.get('why', r.get('outcome'))}"
    for r in sorted(failed, key=_named):
        yield f"  failed: {_named(r)}: {r.get('why', '')}"
