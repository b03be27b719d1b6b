"""File helpers shared by the package: atomic writes and the location of ``data/``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

DATA_DIR_ENV = "DPCD_DATA_DIR"


def data_dir() -> Path:
    """The project's ``data/`` folder: ``$DPCD_DATA_DIR`` if set, else ``<repository>/data``."""
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[2] / "data"


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], None], *, fsync: bool = False) -> Path:
    """Create ``path`` by calling ``write(handle)`` on a temporary file in the same folder, then ``os.replace``.

    Readers see either the old file or the complete new one; on any error the
    temporary file is removed and the old file (if any) is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as UTF-8 with ``\\n`` line ends to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))
