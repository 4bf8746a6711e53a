"""Seeded climbing and trotting trials of the quadruped in simulation, one trial object each.

A trial is set up once (scene, perturbed robot, estimator, controller), stepped one control
cycle at a time, and read out as a :class:`~.result.TrialResult`; its per-cycle samples go
to a column-named :class:`~clamber.recorder.Recorder` (:mod:`.log`). Start reading at
:class:`~.climb.ClimbTrial`.
"""
