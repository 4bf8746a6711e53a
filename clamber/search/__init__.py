"""Morphology search for the jump-climber: CMA-ES co-design and Sobol sweeps (ask/tell)."""
