"""Fixtures of the fuzz suite (the harness itself is fuzz_harness.py)."""

from fuzz_harness import robustness_run, seed_file, telemetry_log  # noqa: F401
