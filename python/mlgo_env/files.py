"""Files written whole or not at all.

`write_atomic` writes to a temporary file in the target's directory, then renames it over
the target, so a reader (the launcher, a rerun, another worker) never sees half a file; on
any error the temporary file is removed and the error raised. Not a lock: two writers of
one path both succeed, the last rename wins.
"""

from __future__ import annotations

import os
import tempfile
from typing import Iterable


def write_atomic(path: str, data: str | bytes | Iterable[bytes]) -> None:
    """Writes `data` (text as UTF-8, bytes, or byte chunks in order) to `path`, creating its
    directory if needed."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, str):
                f.write(data.encode("utf-8"))
            elif isinstance(data, bytes):
                f.write(data)
            else:
                for part in data:
                    f.write(part)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would make it; mkstemp's is 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
