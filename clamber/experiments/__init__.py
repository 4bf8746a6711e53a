"""Multi-trial studies: one trial record, one failure vocabulary, one runner.

Every study (co-design, sweep, jumper robustness, quadruped climb/trot/compare) is a list
of pure, seeded trial tasks mapped over a :class:`clamber.parallel.Evaluator` and recorded,
trial by trial, in a :class:`clamber.storage.RunStore`, so ``--workers``, ``--cluster`` and
``--resume`` mean the same thing for all of them.
"""
