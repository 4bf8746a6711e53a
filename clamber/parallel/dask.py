"""Dask distributed evaluation: a local cluster on loopback, or a running scheduler.

Workers are single-threaded processes that live for the whole run, so everything a task
builds once per process (the CasADi/IPOPT solvers of :func:`clamber.jumper.solve.problem_for`)
is reused for every later candidate that worker evaluates.

A local cluster listens on 127.0.0.1 only and speaks TLS with credentials made for this
run alone (:meth:`distributed.security.Security.temporary`): its scheduler and workers
accept only peers holding a certificate signed by the run's own authority, so another
local process cannot submit work to them. A remote scheduler (``address`` or
``scheduler_file``) uses the TLS settings of the Dask configuration
(``distributed.comm.tls.*``), as every Dask client does. In both cases the client,
scheduler and workers must run the same versions of the packages that cross process
boundaries, or the evaluator refuses to start (:func:`check_versions`).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import dask
from distributed import Client, KilledWorker, LocalCluster, as_completed
from distributed.security import Security
from distributed.versions import error_message, get_versions

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.parallel.base import DEFAULT_MAX_RETRIES, Evaluator, Outcome, check_retries

#: Loopback: nothing is reachable from outside this machine unless an address is given.
LOCAL_HOST = "127.0.0.1"
CONNECT_TIMEOUT_S = 20.0
#: Packages whose versions must agree on client, scheduler and workers, besides Dask's
#: own list: the code the tasks run and the arrays they return.
CHECKED_PACKAGES = ("clamber", "casadi", "numpy", "scipy")
#: Run by every local worker as it starts (:mod:`clamber.parallel.worker_setup`).
WORKER_SETUP = "clamber.parallel.worker_setup"


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_scheduler_file(path: str | os.PathLike, wait_s: float = 2.0) -> str:
    """The scheduler address a scheduler file names; a ConfigError within ``wait_s`` if
    the file is not one (Dask itself would wait for a scheduler to finish writing it; a
    file still being written is read again until ``wait_s`` has passed)."""
    import json

    deadline = time.monotonic() + wait_s
    while True:
        text = check.read_text(path, "scheduler file", ConfigError)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            if time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            data = None
        break
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ConfigError(f"{os.fspath(path)}: not a Dask scheduler file (a JSON object with "
                          "the scheduler's \"address\", as `dask scheduler --scheduler-file` "
                          "writes)")
    return address


class DaskEvaluator(Evaluator):
    """Evaluates tasks on Dask workers.

    Parameters
    ----------
    n_workers:
        Worker processes of the local cluster (default: one per core). Ignored with
        ``address``.
    address:
        A running scheduler, e.g. ``tcp://10.0.0.5:8786`` (its workers should run one
        thread each). Without it a :class:`distributed.LocalCluster` is started whose
        scheduler and workers listen on 127.0.0.1 only.
    max_retries:
        How often a task whose worker died is resubmitted before its outcome is a loss.
        The local scheduler's own retry budget (``allowed-failures``) is set to zero so
        that this count is exact; a remote scheduler applies its own on top.
    dashboard:
        Serve the Dask dashboard of the local cluster on ``127.0.0.1`` at a free port
        (:attr:`dashboard_link`); a remote scheduler serves its own.
    scheduler_file:
        The JSON file a running scheduler wrote (``dask scheduler --scheduler-file``,
        ``dask_jobqueue``'s ``SLURMCluster(scheduler_options={"scheduler_file": ...})``).
    """

    def __init__(self, n_workers: int | None = None, address: str | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, dashboard: bool = False,
                 scheduler_file: str | os.PathLike | None = None) -> None:
        self.max_retries = check_retries(max_retries)
        self._cluster: LocalCluster | None = None
        self._dashboard = dashboard
        self.security: Security | None = None
        t0 = time.perf_counter()
        if address is not None and scheduler_file is not None:
            raise ConfigError("give a scheduler address or a scheduler file, not both")
        if scheduler_file is not None:
            if not os.path.isfile(scheduler_file):
                raise ConfigError(f"scheduler file {os.fspath(scheduler_file)!r} does not "
                                  "exist (has the cluster started?)")
            check_scheduler_file(scheduler_file)
            try:
                self.client = Client(scheduler_file=os.fspath(scheduler_file),
                                     timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError, ValueError, KeyError) as e:
                raise ConfigError(f"cannot reach the Dask scheduler of {scheduler_file!r}: "
                                  f"{e}") from None
        elif address is not None:
            if not isinstance(address, str) or "://" not in address and ":" not in address:
                raise ConfigError(
                    f"cluster address {address!r}: expected a scheduler address like "
                    "tcp://host:8786"
                )
            try:
                self.client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError) as e:
                raise ConfigError(f"cannot reach the Dask scheduler at {address!r}: {e}") from None
        else:
            n = available_cores() if n_workers is None else n_workers
            n = check.integer("", "n_workers", n, low=1)
            self.security = Security.temporary()
            with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                self._cluster = LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, host=LOCAL_HOST,
                    protocol="tls://", security=self.security,
                    dashboard_address=f"{LOCAL_HOST}:0",  # the HTTP server, dashboard or not
                    worker_dashboard_address=f"{LOCAL_HOST}:0",
                    scheduler_kwargs={"dashboard": dashboard},
                    silence_logs=logging.CRITICAL, preload=[WORKER_SETUP],
                )
            self.client = Client(self._cluster, security=self.security, set_as_default=False)
            self.client.wait_for_workers(n, timeout=60)
        try:
            check_versions(self.client)
        except ConfigError:
            self.close()
            raise
        self.start_time_s = time.perf_counter() - t0
        self.address = self.client.scheduler.address

    @property
    def dashboard_link(self) -> str | None:
        """The Dask dashboard's address (None when the local cluster serves none)."""
        if self._cluster is not None and not self._dashboard:
            return None
        return self.client.dashboard_link

    @property
    def n_workers(self) -> int:
        return sum(self.client.nthreads().values())

    def describe(self) -> dict[str, Any]:
        return {"backend": "dask", "workers": self.n_workers,
                "tls": self.address.startswith("tls://"),
                "scheduler": "local" if self._cluster is not None else self.address,
                "start_time_s": self.start_time_s}

    def warm_up(self, fn: Callable[[Any], Any], task: Any) -> None:
        self.client.run(fn, task)

    def imap_unordered(self, fn: Callable[[Any], Any],
                       tasks: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        if not tasks:
            return
        batch = uuid.uuid4().hex[:8]
        attempts = [1] * len(tasks)
        index_of: dict[str, int] = {}
        submitted = []
        for i, task in enumerate(tasks):
            f = self.client.submit(fn, task, key=f"{batch}-{i}-1", pure=False)
            index_of[f.key] = i
            submitted.append(f)
        pending = as_completed(submitted, loop=self.client.loop)
        for future in pending:
            i = index_of.pop(future.key)
            if future.status == "finished":
                yield i, Outcome(value=future.result(), ok=True, attempts=attempts[i])
                continue
            error = future.exception()
            if not isinstance(error, KilledWorker):
                future.result()  # re-raise the task's own exception with its traceback
            if attempts[i] > self.max_retries:
                yield i, Outcome(value=None, ok=False, attempts=attempts[i],
                                 error=f"worker died {attempts[i]} times: {error}")
                continue
            attempts[i] += 1
            retry = self.client.submit(fn, tasks[i], key=f"{batch}-{i}-{attempts[i]}",
                                       pure=False)
            index_of[retry.key] = i
            pending.add(retry)

    def close(self) -> None:
        """Close the client and the local cluster. Dask's log records while they close are
        dropped: tasks still running (a run interrupted) lose their connections then, by
        design, and each would print a traceback."""
        client, cluster = getattr(self, "client", None), getattr(self, "_cluster", None)
        before = logging.root.manager.disable
        logging.disable(logging.CRITICAL)
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            logging.disable(before)
        self._cluster = None


def check_versions(client: Client, local: dict[str, Any] | None = None) -> None:
    """Refuse a cluster whose scheduler or workers run other versions than this client.

    Dask's own comparison (:func:`distributed.versions.error_message`, which Dask itself
    only warns about) over its required packages plus :data:`CHECKED_PACKAGES`; a task
    pickled by one version and run by another is a silent wrong answer at best.
    ``local`` replaces this process's versions (for tests).
    """
    versions = client.get_versions(packages=list(CHECKED_PACKAGES))
    mine = local if local is not None else get_versions(packages=list(CHECKED_PACKAGES))
    text = error_message(versions["scheduler"], versions["workers"], mine)["warning"]
    if text:
        raise ConfigError("the Dask cluster runs other package versions than this "
                          f"process; install the same versions everywhere.\n{text}")
