"""The evaluator a command asks for: in-process, a local Dask cluster or a remote one."""

from __future__ import annotations

from clamber.exceptions import ConfigError
from clamber.parallel.base import DEFAULT_MAX_RETRIES, Evaluator
from clamber.parallel.serial import SerialEvaluator


def make_evaluator(workers: int = 0, cluster: str | None = None,
                   max_retries: int = DEFAULT_MAX_RETRIES) -> Evaluator:
    """The evaluator the command line asks for.

    ``workers = 0`` without ``cluster`` runs in this process (no multiprocessing at
    all); ``workers >= 1`` starts a local Dask cluster of that many single-threaded
    worker processes on 127.0.0.1; ``cluster`` connects to a running scheduler
    (``tcp://host:port``) and ignores ``workers``.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        raise ConfigError(f"workers = {workers!r}: must be an integer >= 0 (0 = in-process)")
    if cluster is None and workers == 0:
        return SerialEvaluator(max_retries=max_retries)
    from clamber.parallel.dask import DaskEvaluator  # distributed loads only when needed

    return DaskEvaluator(n_workers=workers or None, address=cluster, max_retries=max_retries)
