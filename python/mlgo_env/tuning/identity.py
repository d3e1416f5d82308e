"""What makes a tuned module the same module again: in a corpus, and in a compiler's stream.

Two identities, for two readers (the format: docs/tuning-format.md):

- **corpus identity** (:func:`module_identity`): SHA-256 of the module's bitcode and of
  its command file. `python -m mlgo_env.tune` skips a module whose identity is unchanged,
  and `tune status --corpus=NEW` says which modules of a newer corpus are still covered.
- **stream identity** (:class:`StreamHash`): each observation the compiler sends while the
  recorded decisions are answered hashes (SHA-256) to a digest of the raw bytes of its
  identity features, in the sorted order of their names; the stream's identity is the
  SHA-256 of those digests, concatenated in order. The launcher
  (``mlgo-env-launch --tuning=DIR``) computes the same hash as the build's compile runs:
  the first observation's hash finds the module's entry, the whole stream's confirms it.
  Same IR, flags and compiler give the same stream; an edit that changes any decision's
  features changes it.

The identity features are the compiler's own features, without the IR2Vec embeddings
(callee_embedding, caller_embedding): the search reads them to name callees, but a build
compiles without IR2Vec, and they are functions of the IR the other features already see.

Pure functions and a small hashing object; no I/O except reading the module's files.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from typing import Any, Mapping, Sequence

import numpy as np

#: observation features that never enter a stream identity
NOT_IDENTITY = frozenset({"callee_embedding", "caller_embedding"})


def identity_features(names: Sequence[str]) -> list[str]:
    """The identity features among an observation's feature `names`, sorted."""
    return sorted(n for n in names if n not in NOT_IDENTITY)


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def module_identity(corpus: str, module: str) -> dict[str, str]:
    """{"bitcode": sha256 of <m>.bc, "command": sha256 of <m>.cmd (or of nothing when the
    corpus has a global command)}; OSError when the bitcode cannot be read."""
    base = os.path.join(corpus, module)
    command = base + ".cmd"
    return {"bitcode": file_sha256(base + ".bc"),
            "command": file_sha256(command) if os.path.exists(command)
            else hashlib.sha256(b"").hexdigest()}


_OPT = re.compile(r"^-O(\d+|s|z|fast|g)?$")


def opt_level(args: Sequence[str]) -> str:
    """The optimisation level a compile's arguments ask for, as the launcher spells it:
    the last ``-O…`` (``-O`` is ``-O1``, ``-O4`` and above ``-O3``), else ``-O0``."""
    level = "-O0"
    for a in args:
        m = _OPT.match(a)
        if m:
            v = m.group(1)
            level = "-O1" if v is None else (f"-O{min(int(v), 3)}" if v.isdigit() else f"-O{v}")
    return level


def module_opt_level(corpus: str, module: str) -> str:
    """The optimisation level of a corpus module's command (<m>.cmd, NUL-separated, or the
    description's global_command_override)."""
    path = os.path.join(corpus, module + ".cmd")
    if os.path.exists(path):
        with open(path, "rb") as f:
            args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        return opt_level(args)
    import json
    with open(os.path.join(corpus, "corpus_description.json"), encoding="utf-8") as f:
        return opt_level(json.load(f).get("global_command_override") or [])


def tuned_identity(corpus: str, module: str, clang_version: str) -> dict[str, str]:
    """What a tuned module's state is keyed by: its corpus identity and the compiler's
    version (a module tuned with another compiler is tuned again)."""
    return {**module_identity(corpus, module), "clang": clang_version}


def observation_bytes(obs: Mapping[str, Any], features: Sequence[str]) -> bytes:
    """One observation's identity bytes: each feature's raw little-endian tensor, in
    `features` order. KeyError naming a feature the observation lacks."""
    parts = []
    for name in features:
        if name not in obs:
            raise KeyError(f"the observation has no feature '{name}'")
        value = np.ascontiguousarray(obs[name])
        if value.dtype.byteorder == ">":
            value = value.astype(value.dtype.newbyteorder("<"))
        parts.append(value.tobytes())
    return b"".join(parts)


class StreamHash:
    """Accumulates a stream identity, one observation at a time: each observation's bytes
    hash to a SHA-256 digest; `first` is the first digest in hex (None before any), and
    `hexdigest()` the SHA-256 of all digests concatenated; `count` the observations seen.
    Holds only digests, so it pickles (a record episode may run on a Dask worker)."""

    def __init__(self, features: Sequence[str]) -> None:
        self.features = list(features)
        self.digests: list[bytes] = []

    @property
    def first(self) -> str | None:
        return self.digests[0].hex() if self.digests else None

    @property
    def count(self) -> int:
        return len(self.digests)

    def add(self, obs: Mapping[str, Any]) -> None:
        self.digests.append(hashlib.sha256(observation_bytes(obs, self.features)).digest())

    def hexdigest(self) -> str:
        return hashlib.sha256(b"".join(self.digests)).hexdigest()


def entry_key(first: str) -> str:
    """The table's file name stem for entries whose first observation hashes to `first`."""
    return first[:16]


def clang_identity(clang: str | None = None) -> dict[str, Any]:
    """The compiler a table is made with: its resolved path, size and modification time
    (the launcher's cheap check), and its `--version` first line (the launcher's check
    when those differ). `clang`: a name or path; default clang-22 on PATH."""
    import subprocess
    name = clang or "clang-22"
    found = shutil.which(name) if os.sep not in name else name
    if not found:
        raise FileNotFoundError(f"compiler '{name}' not found on PATH")
    real = os.path.realpath(found)
    st = os.stat(real)
    out = subprocess.run([real, "--version"], capture_output=True, text=True, check=True)
    return {"path": real, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "version": out.stdout.splitlines()[0].strip() if out.stdout else ""}
