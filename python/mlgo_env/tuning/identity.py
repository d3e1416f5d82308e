"""What makes a tuned module the same module again: in a corpus, and in a compiler's stream.

Two identities, for two readers (the format: docs/tuning-format.md):

- **corpus identity** (:func:`module_identity`): SHA-256 of the module's bitcode and of
  its command file (the build's directory in it written as `.`: the same sources built in
  another directory are the same modules), and of the profile its command reads, if any
  (:func:`profile_identity`).
  `python -m mlgo_env.tune` skips a module whose identity is unchanged,
  and `tune status --corpus=NEW` says which modules of a newer corpus are still covered.
- **profile identity** (:func:`profile_identity`): a compile built with a profile (PGO) gives
  another object when the profile's content changes, though its command names the same
  path; the bitcode does not always show it (a front-end profile, ``-fprofile-instr-generate``,
  annotates the IR the corpus keeps; an IR-level one, ``-fprofile-generate``, is read again
  by every recompile, and the corpus keeps only its path). So the profile's content is part
  of the module's identity, and its table entry records it (``profile``); the launcher
  computes the same from the build's arguments (launch/profile_identity.cc) and applies the
  entry only to a compile reading the same content.
- **stream identity** (:class:`StreamHash`): each observation the compiler sends while the
  recorded decisions are answered hashes (SHA-256) to a digest of the raw bytes of its
  identity features (:func:`identity_features`: every feature but the IR2Vec embeddings,
  sorted); the stream's identity is the SHA-256 of those digests, concatenated in order.
  The launcher (``mlgo-env-launch --tuning=DIR``) computes the same hash as the build's
  compile runs: the first observation's hash finds the module's entry, the whole stream's
  confirms it. Same IR, flags and compiler give the same stream; an edit that changes any
  decision's features changes it.
- **site key** (:func:`site_key`, inlining only): each decision's identity bytes without the
  features that describe more than the call site (:func:`site_features`: ``node_count`` and
  ``edge_count`` count every function of the module, so any edit anywhere changes them; the
  caller's size, users and call-graph height change with any edit in the caller), hashed
  (SHA-256) and cut to 8 bytes. An entry records one per decision (``sites``): when a module's stream changed,
  the launcher answers each decision whose key the old stream had with the old action (the
  k-th occurrence of a key gets the k-th recorded one) and the others with clang's own.

The stream identity and site keys are the launcher's own code
(include/mlgo/table/stream_identity.h), called through the package's compiled core
(ImportError when it is not built); what holds their digests keeps bytes, so it pickles (a
record episode may run on a Dask worker).

Pure functions and a small hashing object; no I/O except reading the module's files.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from typing import Any, Mapping, Sequence

from .._native import load_core


def _table() -> Any:
    return load_core().table


def identity_features(names: Sequence[str]) -> list[str]:
    """The identity features among an observation's feature `names`: sorted, without the
    IR2Vec embeddings."""
    return list(_table().identity_features(list(names)))


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: cc1 options whose value is the build's directory: they name it in debug and coverage
#: data only, never in the executable code
_PLACE_OPTIONS = (b"-fdebug-compilation-dir", b"-fcoverage-compilation-dir")


def command_sha256(path: str) -> str:
    """SHA-256 of a command file (NUL-separated arguments) with the build's directory (the
    value of -fdebug-compilation-dir / -fcoverage-compilation-dir) written as `.` wherever
    an argument holds it: the same compile in another checkout or build directory has the
    same identity. OSError when the file cannot be read."""
    with open(path, "rb") as f:
        args = f.read().split(b"\0")
    places = set()
    for i, a in enumerate(args):
        for option in _PLACE_OPTIONS:
            if a.startswith(option + b"="):
                places.add(a[len(option) + 1:])
            elif a == option and i + 1 < len(args):
                places.add(args[i + 1])
    for place in sorted((p for p in places if len(p) > 1), key=len, reverse=True):
        args = [a.replace(place, b".") for a in args]
    return hashlib.sha256(b"\0".join(args)).hexdigest()


def module_identity(corpus: str, module: str) -> dict[str, str]:
    """{"bitcode": sha256 of <m>.bc, "command": :func:`command_sha256` of <m>.cmd (or
    sha256 of nothing when the corpus has a global command)}, and "profile" when the
    command reads a profile: its
    profile identity, or "unreadable: PATH: REASON" (see :func:`module_profile`). OSError
    when the bitcode cannot be read."""
    base = os.path.join(corpus, module)
    command = base + ".cmd"
    identity = {"bitcode": file_sha256(base + ".bc"),
                "command": command_sha256(command) if os.path.exists(command)
                else hashlib.sha256(b"").hexdigest()}
    profile = module_profile(corpus, module)
    if profile is not None:
        identity["profile"] = profile
    return identity


def profile_files(args: Sequence[str], directory: str) -> tuple[str | None, str | None]:
    """(instrumentation profile, sample profile) a compile with `args` (driver or cc1
    spelling) reads, as clang-22 chooses them, each resolved against `directory` (the
    compile's working directory), or None. The last flag of each family wins:
    ``-fprofile-instr-use=F``, ``-fprofile-use=F`` (a directory F means
    ``F/default.profdata``), bare ``-fprofile-instr-use``/``-fprofile-use``
    (``default.profdata``), ``-fprofile-instrument-use-path=F`` (cc1), off with
    ``-fno-profile-instr-use``/``-fno-profile-use``; ``-fprofile-sample-use=F``,
    ``-fauto-profile=F``, off with ``-fno-profile-sample-use``/``-fno-auto-profile``.
    The launcher's rules (launch/profile_identity.cc). Stats at most one path."""
    instr: str | None = None
    sample: str | None = None
    for a in args:
        if a.startswith(("-fprofile-instr-use=", "-fprofile-instrument-use-path=")):
            instr = os.path.join(directory, a.split("=", 1)[1])
        elif a.startswith("-fprofile-use="):
            value = a.split("=", 1)[1]
            path = os.path.join(directory, value)
            instr = os.path.join(path, "default.profdata") if not value or \
                os.path.isdir(path) else path
        elif a in ("-fprofile-instr-use", "-fprofile-use"):
            instr = os.path.join(directory, "default.profdata")
        elif a in ("-fno-profile-instr-use", "-fno-profile-use"):
            instr = None
        elif a.startswith(("-fprofile-sample-use=", "-fauto-profile=")):
            sample = os.path.join(directory, a.split("=", 1)[1])
        elif a in ("-fno-profile-sample-use", "-fno-auto-profile"):
            sample = None
    return instr, sample


def profile_identity(args: Sequence[str], directory: str) -> str | None:
    """The profile identity of a compile with `args` run in `directory`: None when it reads
    no profile; else the SHA-256 (hex) of the profile's bytes, or, when it reads both kinds,
    the SHA-256 of the two files' digests (32 bytes each, the instrumentation profile's
    first). Reads the profiles; OSError naming one that cannot be read."""
    digests = [bytes.fromhex(file_sha256(p)) for p in profile_files(args, directory) if p]
    if not digests:
        return None
    if len(digests) == 1:
        return digests[0].hex()
    return hashlib.sha256(b"".join(digests)).hexdigest()


def is_profile_digest(value: Any) -> bool:
    """Whether `value` is a profile identity a table entry can hold (64 lower-case hex)."""
    return isinstance(value, str) and _table().is_digest(value)


def _compile_directory(args: Sequence[str], corpus: str, module: str) -> str:
    """Where a corpus module's compile ran: its cc1 command's compilation directory (the
    driver passes its working directory as ``-fcoverage-compilation-dir`` and
    ``-fdebug-compilation-dir``; the first absolute one of those), else its entry in the
    corpus's compile_commands.json (``corpus build`` writes one), else the corpus."""
    for flag in ("-fcoverage-compilation-dir=", "-fdebug-compilation-dir="):
        for a in reversed(args):
            if a.startswith(flag) and os.path.isabs(a[len(flag):]):
                return a[len(flag):]
    if os.path.exists(os.path.join(corpus, "compile_commands.json")):
        from .replay_lines import compile_commands
        try:
            found = compile_commands(corpus).get(module)
        except (OSError, ValueError, ImportError):
            found = None
        if found is not None:
            return found.directory
    return corpus


def module_args(corpus: str, module: str) -> list[str]:
    """A corpus module's recorded command (<m>.cmd, NUL-separated, or the description's
    global_command_override)."""
    path = os.path.join(corpus, module + ".cmd")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    import json
    with open(os.path.join(corpus, "corpus_description.json"), encoding="utf-8") as f:
        return list(json.load(f).get("global_command_override") or [])


def _names_a_profile(args: Sequence[str]) -> bool:
    """Whether a command has any profile flag at all (the cheap test before resolving
    its compile's directory)."""
    return any("profile" in a or a.startswith("-fauto-profile") for a in args)


def module_profile_files(corpus: str, module: str) -> tuple[str | None, str | None]:
    """(instrumentation profile, sample profile) a corpus module's command reads, resolved
    against its compile's directory (:func:`profile_files`); (None, None) for none."""
    args = module_args(corpus, module)
    if not _names_a_profile(args):
        return None, None
    return profile_files(args, _compile_directory(args, corpus, module))


def module_profile(corpus: str, module: str) -> str | None:
    """The profile identity of a corpus module's command (:func:`profile_identity`,
    resolved against its compile's directory): None when it reads no profile,
    "unreadable: PATH: REASON" when the profile cannot be read, "stale: PATH ..." when a
    front-end profile changed after the module was captured (either way the module gets no
    table entry: the table could not tell a build's profile from it)."""
    args = module_args(corpus, module)
    if not _names_a_profile(args):
        return None
    directory = _compile_directory(args, corpus, module)
    try:
        identity = profile_identity(args, directory)
        stale = _captured_before(args, directory, os.path.join(corpus, module + ".bc"))
    except OSError as e:
        return f"unreadable: {e.filename}: {e.strerror}"
    return f"stale: {stale}" if stale else identity


def _captured_before(args: Sequence[str], directory: str, bitcode: str) -> str | None:
    """Why the captured `bitcode` is older than the front-end profile its command names,
    or None. A front-end profile (``-fprofile-instr-generate``'s; cc1 says
    ``-fprofile-instrument-use=clang``) is read when the source is compiled, into the
    bitcode's branch weights, and never again: a corpus recompile does not see a new one, so
    the corpus must be captured again with it. (An IR-level profile is read by every
    recompile.) Judged by modification times; OSError when a file cannot be read."""
    if "-fprofile-instrument-use=clang" not in args:
        return None
    instr, _ = profile_files(args, directory)
    if instr is None or os.stat(instr).st_mtime_ns <= os.stat(bitcode).st_mtime_ns:
        return None
    return (f"{instr} changed after the corpus was captured (a front-end profile is in the "
            "bitcode: capture the corpus again with it)")


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
    """The optimisation level of a corpus module's command (:func:`module_args`)."""
    return opt_level(module_args(corpus, module))


#: the regalloc scores a search may lower (the environment's `regalloc_score`; docs/regalloc.md)
REGALLOC_SCORES = ("llvm", "instructions", "executed")


def tuned_identity(corpus: str, module: str, clang_version: str,
                   score: str | None = None) -> dict[str, str]:
    """What a tuned module's state is keyed by: its corpus identity (with its profile's)
    and the compiler's version (a module tuned with another compiler, or with another
    profile, is tuned again), and the regalloc score its search lowered when it is not
    LLVM's (`score` "instructions" or "executed"; None or "llvm": none, as before the
    option)."""
    extra = {"score": score} if score not in (None, "llvm") else {}
    return {**module_identity(corpus, module), "clang": clang_version, **extra}


class StreamHash:
    """Accumulates a stream identity, one observation at a time: each observation hashes to
    a SHA-256 digest over `features` (a table's identity features); `first` is the first
    digest in hex (None before any), and `hexdigest()` the stream's identity; `count` the
    observations seen. Holds only digests (bytes), so it pickles."""

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
        """Hashes one observation; KeyError naming a feature it lacks."""
        self.digests.append(_table().identity_digest(obs, self.features))

    def hexdigest(self) -> str:
        return _table().stream_hex(self.digests)


def entry_key(first: str) -> str:
    """The table's file name stem for entries whose first observation hashes to `first`."""
    return _table().entry_key(first)


def site_features(features: Sequence[str]) -> list[str]:
    """The features a site key hashes: `features` (the table's identity features, in their
    order) without the module-wide and the caller's (the core's kNotSiteFeatures)."""
    return list(_table().site_features(list(features)))


def site_key(obs: Mapping[str, Any], features: Sequence[str]) -> bytes:
    """An inlining decision's site key (8 bytes) over `features` (:func:`site_features` of
    the table's). KeyError naming a feature the observation lacks."""
    return _table().site_key(obs, list(features))


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
