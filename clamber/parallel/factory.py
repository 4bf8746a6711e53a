"""The evaluator a command asks for: in-process, a local Dask cluster or a remote one."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from clamber import _validate as v
from clamber.exceptions import ConfigError
from clamber.parallel.base import DEFAULT_MAX_RETRIES, Evaluator, Outcome, check_retries
from clamber.parallel.serial import SerialEvaluator


def make_evaluator(workers: int = 0, cluster: str | None = None,
                   max_retries: int = DEFAULT_MAX_RETRIES, dashboard: bool = False,
                   scheduler_file: str | None = None,
                   on_start: Callable[[Evaluator], None] | None = None) -> Evaluator:
    """The evaluator the command line asks for.

    ``workers = 0`` without ``cluster`` runs in this process (no multiprocessing at
    all); ``workers >= 1`` starts a local Dask cluster of that many single-threaded
    worker processes on 127.0.0.1, reachable only with this run's TLS credentials;
    ``cluster`` connects to a running scheduler (``tcp://host:port``) and
    ``scheduler_file`` to the one that wrote that file (both ignore ``workers``).
    ``dashboard`` serves the local cluster's Dask dashboard.

    A local cluster starts on first use (:class:`LazyEvaluator`), so a run with nothing
    left to evaluate starts no process; a remote scheduler is reached at once (an
    unreachable one is an error before anything runs). ``on_start`` is called with the
    Dask evaluator once it runs.
    """
    v.integer("", "workers", workers, low=0)  # 0 = in-process
    if cluster is None and scheduler_file is None and workers == 0:
        if dashboard:
            raise ConfigError("the dashboard needs Dask workers: --workers >= 1, --cluster "
                              "or --scheduler-file")
        return SerialEvaluator(max_retries=max_retries)
    check_retries(max_retries)

    def start() -> Evaluator:
        from clamber.parallel.dask import DaskEvaluator  # distributed loads only when needed

        evaluator = DaskEvaluator(n_workers=workers or None, address=cluster,
                                  max_retries=max_retries, dashboard=dashboard,
                                  scheduler_file=scheduler_file)
        if on_start is not None:
            on_start(evaluator)
        return evaluator

    if cluster is not None or scheduler_file is not None:
        return start()
    return LazyEvaluator(start, max_retries)


class LazyEvaluator(Evaluator):
    """An evaluator that starts its backend when the first task arrives (or when asked
    for its size or its backend's attributes): resuming a finished run, or a study whose
    options are refused, starts no cluster. Results are the backend's, unchanged."""

    def __init__(self, start: Callable[[], Evaluator],
                 max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self._start = start
        self._backend: Evaluator | None = None
        self.max_retries = max_retries

    @property
    def started(self) -> bool:
        """Whether the backend runs."""
        return self._backend is not None

    @property
    def backend(self) -> Evaluator:
        """The running backend (started now if it was not)."""
        if self._backend is None:
            self._backend = self._start()
        return self._backend

    @property
    def n_workers(self) -> int:
        return self.backend.n_workers

    def imap_unordered(self, fn: Callable[[Any], Any],
                       tasks: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        if not tasks:
            return iter(())
        return self.backend.imap_unordered(fn, tasks)

    def warm_up(self, fn: Callable[[Any], Any], task: Any) -> None:
        self.backend.warm_up(fn, task)

    def describe(self) -> dict[str, Any]:
        if self._backend is None:
            return {"backend": "dask", "workers": 0, "started": False}
        return self._backend.describe()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __getattr__(self, name: str) -> Any:  # the backend's own attributes (client, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.backend, name)
