"""The robot model: its description, kinematics and statics."""
