"""The executable bytes of ELF objects and binaries: what tuning for size is measured by.

Reads 64-bit little-endian ELF files (x86-64 objects, executables and shared libraries).
Errors: ValueError naming the file when it is not such a file or is cut short.
"""

from __future__ import annotations

import struct

_SHF_EXECINSTR = 0x4
_SHT_NOBITS = 8


def executable_sections(path: str) -> list[tuple[str, bytes]]:
    """[(name, contents)] of the file's SHF_EXECINSTR sections, in section order."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4:5] != b"\x02" or data[5:6] != b"\x01":
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
                   for i in range(shnum)]
        names_at = headers[shstrndx][4]
        out = []
        for name, kind, flags, _addr, offset, size in headers:
            if flags & _SHF_EXECINSTR and kind != _SHT_NOBITS:
                end = data.index(b"\0", names_at + name)
                out.append((data[names_at + name:end].decode(), data[offset:offset + size]))
    except (struct.error, IndexError, ValueError) as e:
        raise ValueError(f"{path}: a truncated or malformed ELF file ({e})") from e
    return out


def executable_bytes(path: str) -> bytes:
    """The file's executable sections' contents, concatenated in section order."""
    return b"".join(contents for _, contents in executable_sections(path))
