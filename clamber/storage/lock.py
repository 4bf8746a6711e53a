"""One writer per run directory: an advisory lock held for as long as a store is open.

The lock is ``fcntl.flock`` on ``run.lock`` (``msvcrt.locking`` on Windows). The
operating system drops it when the process ends, however it ends, so a run killed with
``kill -9`` leaves nothing stale behind and can be resumed at once; a second process
that opens the same run while the first is alive is refused at start instead of
writing the same files. The file holds the owner's process id and host, for the message.
It is opened without following links (:func:`open_no_follow`).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from clamber._validate import open_no_follow
from clamber.exceptions import ConfigError

LOCK_NAME = "run.lock"

try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


class RunLock:
    """The exclusive lock of one run directory; :meth:`acquire` it, then :meth:`release`."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock, or raise ConfigError naming the process that holds it."""
        fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT)
        if not _try_lock(fd):
            try:
                owner = os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown"
            except OSError:  # Windows forbids reading a locked region
                owner = "unknown"
            finally:
                os.close(fd)
            raise ConfigError(
                f"{self.run_dir} is in use by another clamber process ({owner}); wait for it "
                "to finish or stop it before resuming"
            )
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (idempotent); the file stays, it is harmless."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            _unlock(fd)
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None
