"""Figures of clamber results: gripper statics and safe regions, trajectories, runs."""
