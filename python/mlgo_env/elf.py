"""The executable bytes of object files and binaries: what tuning for size is measured by.

The compiled core reads them (``_core.executable_sections``, the corpus layer's reader in
include/mlgo/corpus/executable_sections.h, which also scores an episode's size): ELF objects,
executables and shared libraries. Errors: FileNotFoundError or OSError when the file cannot be
read, ValueError naming the file when it is not an object file or is cut short; ImportError
when the core is not built.
"""

from __future__ import annotations

import os

from ._native import load_core


def executable_sections(path: str | os.PathLike[str]) -> list[tuple[str, bytes]]:
    """[(name, contents)] of the file's executable (SHF_EXECINSTR) sections, in section
    order. Reads the file."""
    return load_core().executable_sections(os.fspath(path))


def executable_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's executable sections' contents, concatenated in section order."""
    return b"".join(contents for _, contents in executable_sections(path))
