"""Set-up of a local cluster's worker processes (a Dask preload: ``dask_setup`` runs as
each worker starts).

A Ctrl-C in the terminal reaches every process of the group. Only the command's own
process acts on it (it stops the study, closes the cluster and says how to resume); a
worker ignores it instead of printing its traceback, and ends when the cluster closes.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (where the signal can be set: its main
    thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
