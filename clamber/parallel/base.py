"""The evaluator contract shared by every backend."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from clamber.exceptions import ConfigError

DEFAULT_MAX_RETRIES = 2


@dataclass(frozen=True)
class Outcome:
    """What became of one task.

    ``value`` is the function's return value when ``ok``; otherwise ``error`` says why
    there is none (the worker running it died more than ``max_retries`` times).
    ``attempts`` counts the executions started, retries included.
    """

    value: Any
    ok: bool
    attempts: int
    error: str = ""


class Evaluator(abc.ABC):
    """Maps ``fn`` over tasks; backends differ only in where ``fn`` runs.

    Rules every backend obeys (and ``tests/search`` checks on each):

    * ``fn`` and every task are picklable; ``fn(task)`` is a pure function of the task,
      so results do not depend on the backend, the worker count or completion order.
    * :meth:`imap_unordered` yields ``(index, Outcome)`` once per task as tasks finish;
      :meth:`map` returns the outcomes in task order.
    * An exception raised by ``fn`` is a bug and propagates to the caller unchanged.
    * The death of a worker process is not an exception: the task is resubmitted up to
      ``max_retries`` times, then reported as an ``Outcome`` with ``ok=False``.
    """

    max_retries: int = DEFAULT_MAX_RETRIES

    @property
    @abc.abstractmethod
    def n_workers(self) -> int:
        """Number of tasks that can run at once."""

    @abc.abstractmethod
    def imap_unordered(self, fn: Callable[[Any], Any],
                       tasks: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        """Yield ``(task index, outcome)`` as each task finishes."""

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Outcome]:
        """Outcomes in task order."""
        out: list[Outcome | None] = [None] * len(tasks)
        for i, outcome in self.imap_unordered(fn, tasks):
            out[i] = outcome
        return out  # type: ignore[return-value]

    def warm_up(self, fn: Callable[[Any], Any], task: Any) -> None:
        """Run ``fn(task)`` once in every worker process, so that what it builds once per
        process (solvers) is ready before timing or a run starts."""
        fn(task)

    def describe(self) -> dict[str, Any]:
        """Backend name and size, for run summaries."""
        return {"backend": type(self).__name__, "workers": self.n_workers}

    def close(self) -> None:  # noqa: B027 - in-process backends hold nothing to release
        """Release processes and sockets (idempotent)."""

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_retries(max_retries: int) -> int:
    """Validate a retry budget."""
    if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
        raise ConfigError(f"max_retries = {max_retries!r}: must be an integer >= 0")
    return max_retries
