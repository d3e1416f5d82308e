"""The tuning table: the decisions `python -m mlgo_env.tune` found, as the launcher reads them.

A thin wrapper: the one reader and writer are C++ (include/mlgo/table/tuning_table.h,
table_writer.h), called through the package's compiled core, so what tune writes, what
`tune status` reads and refuses (in the words it refuses them in) and what
``mlgo-env-launch --tuning=DIR`` applies are one implementation. docs/tuning-format.md
specifies the directory::

    DIR/tuning.json              the manifest: format, version, problem, identity features,
                                 the compiler it was made with, module count, profiles
    DIR/modules/<key>.json       the entries whose first observation hashes to <key>
    DIR/module-index.json        module, opt and first hash of each entry with site keys
    DIR/state/<module>.json      the search state of each module (tune's own:
                                 mlgo_env.tuning.state; the launcher never reads it)
    DIR/report.csv               module, default score, tuned score, reward, status, note

Files are replaced atomically, so a reader never sees half a file. Readers raise
:class:`TableError` naming the file for anything malformed or unreadable; the writer
raises ValueError (nothing written) for what the reader would refuse, OSError for a file
it cannot write. Everything needs the core (ImportError when it is not built). Not
thread-safe; one writer per directory.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from .._native import load_core
from ..files import write_atomic  # noqa: F401 - the tuning layer's writers


class TableError(ValueError):
    """A tuning directory or one of its files is missing, malformed or of another kind."""


@dataclass
class Entry:
    """One module's tuned decisions (an entry of docs/tuning-format.md)."""

    module: str
    actions: list[int]
    #: hex SHA-256 of the first observation's identity bytes; of the whole stream's digests
    first: str
    stream: str
    default_score: float
    tuned_score: float
    #: the optimisation level tune compiled it at ("-Oz"); a compile at another misses
    opt: str = "-O0"
    #: the profile identity of its compile ("" = no profile); a compile reading another misses
    profile: str = ""
    #: inlining: one site key per decision (identity.site_key, 8 bytes each), concatenated;
    #: None in tables older than the field (no stale route for the entry)
    sites: bytes | None = None
    #: regalloc: the register priorities answered beside the evictions, as the entry's JSON
    #: holds them ({"questions": N, "functions": {name: {"step": multiplier}}}); None =
    #: clang's own priorities
    priorities: dict[str, Any] | None = None

    def _fields(self) -> tuple:
        return (self.module, self.actions, self.first, self.stream, float(self.default_score),
                float(self.tuned_score), self.opt, self.profile, self.sites, self.priorities)

    @staticmethod
    def _of(fields: tuple) -> "Entry":
        module, actions, first, stream, default, tuned, opt, profile, sites, prio = fields
        return Entry(module, list(actions), first, stream, default, tuned, opt, profile, sites,
                     prio)

    def to_json(self) -> dict[str, Any]:
        """The entry as its JSON object (as an entries file holds it); ValueError when the
        reader would refuse it."""
        return json.loads(_table().entry_text(self._fields()))

    @staticmethod
    def from_json(value: Any, where: str) -> "Entry":
        """An entry from its parsed JSON object, checked as the reader checks an entries
        file's; TableError prefixed with `where`."""
        try:
            text = json.dumps(value)
        except (TypeError, ValueError) as e:
            raise TableError(f"tuning file '{where}': an entry is not JSON: {e}") from e
        with _table_errors():
            return Entry._of(_table().parse_entry(text, where))


def _table() -> Any:
    return load_core().table


@contextlib.contextmanager
def _table_errors() -> Iterator[None]:
    """Turns the core's refusals (ValueError) into TableError."""
    try:
        yield
    except TableError:
        raise
    except ValueError as e:
        raise TableError(str(e)) from None


def write_table(directory: str, problem: str, features: Sequence[str], clang: dict,
                entries: Iterable[Entry]) -> int:
    """Writes the manifest, every entries file and the module index of `directory`,
    removing entries files no entry needs any more. Returns the number of entries.
    ValueError (nothing written) for an unknown problem, features not sorted and distinct,
    an action outside 0..255 or an entry the reader would refuse; OSError naming a file
    that cannot be written. Blocks on the writes."""
    return _table().write_table(directory, problem, list(features), clang,
                                [e._fields() for e in entries])


def read_manifest(directory: str) -> dict[str, Any]:
    """The manifest of `directory` (its JSON as a dict; "profiles" only when the file has
    it), checked; TableError naming the file otherwise."""
    with _table_errors():
        return _table().read_manifest(directory)


def read_entries(directory: str) -> list[Entry]:
    """Every entry of `directory` (its entries files in name order); TableError naming the
    first bad file."""
    with _table_errors():
        return [Entry._of(fields) for fields in _table().read_entries(directory)]
