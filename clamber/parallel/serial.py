"""In-process evaluation: the reference every parallel backend must reproduce."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from clamber.parallel.base import DEFAULT_MAX_RETRIES, Evaluator, Outcome, check_retries


class SerialEvaluator(Evaluator):
    """Runs each task in this process, in order (for debugging, tests and profiling).

    Nothing is pickled and no process can die on its own, so every outcome takes one
    attempt.
    """

    def __init__(self, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.max_retries = check_retries(max_retries)

    @property
    def n_workers(self) -> int:
        return 1

    def imap_unordered(self, fn: Callable[[Any], Any],
                       tasks: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        for i, task in enumerate(tasks):
            yield i, Outcome(value=fn(task), ok=True, attempts=1)
