"""Physics simulation of the jump-climber: motors, grippers, playback, robustness, hand-off."""
