"""The evaluator a command asks for: in-process, a local Dask cluster or a remote one."""

from __future__ import annotations

from clamber import _validate as v
from clamber.exceptions import ConfigError
from clamber.parallel.base import DEFAULT_MAX_RETRIES, Evaluator
from clamber.parallel.serial import SerialEvaluator


def make_evaluator(workers: int = 0, cluster: str | None = None,
                   max_retries: int = DEFAULT_MAX_RETRIES, dashboard: bool = False,
                   scheduler_file: str | None = None) -> Evaluator:
    """The evaluator the command line asks for.

    ``workers = 0`` without ``cluster`` runs in this process (no multiprocessing at
    all); ``workers >= 1`` starts a local Dask cluster of that many single-threaded
    worker processes on 127.0.0.1, reachable only with this run's TLS credentials;
    ``cluster`` connects to a running scheduler (``tcp://host:port``) and
    ``scheduler_file`` to the one that wrote that file (both ignore ``workers``).
    ``dashboard`` serves the local cluster's Dask dashboard.
    """
    v.integer("", "workers", workers, low=0)  # 0 = in-process
    if cluster is None and scheduler_file is None and workers == 0:
        if dashboard:
            raise ConfigError("the dashboard needs Dask workers: --workers >= 1, --cluster "
                              "or --scheduler-file")
        return SerialEvaluator(max_retries=max_retries)
    from clamber.parallel.dask import DaskEvaluator  # distributed loads only when needed

    return DaskEvaluator(n_workers=workers or None, address=cluster, max_retries=max_retries,
                         dashboard=dashboard, scheduler_file=scheduler_file)
