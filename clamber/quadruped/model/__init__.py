"""The robot model: its description, kinematics, statics and mobility."""
