"""Planar jump-climbing robot: morphology, dynamics, trajectory optimization."""
