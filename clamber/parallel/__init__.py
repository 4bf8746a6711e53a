"""Evaluators that map a picklable function over candidates: serial or Dask distributed.

Every backend returns exactly what the serial loop returns, in task order; a worker
process that dies mid-task is detected and its task retried a bounded number of times.

Spreading a run over a lab cluster or an HPC queue needs no code change: start a Dask
scheduler there (``dask scheduler``, or a ``dask_jobqueue.SLURMCluster`` / ``PBSCluster``
whose ``scheduler_address`` you print) with single-threaded workers that have clamber
installed (``dask worker ADDRESS --nthreads 1``), then pass its address
(``clamber jumper codesign --cluster tcp://host:8786``). Tasks and results are plain
dataclasses and arrays; nothing unpicklable crosses process boundaries.
"""

from clamber.parallel.base import Evaluator, Outcome
from clamber.parallel.factory import make_evaluator
from clamber.parallel.serial import SerialEvaluator

__all__ = ["Evaluator", "Outcome", "SerialEvaluator", "make_evaluator"]
