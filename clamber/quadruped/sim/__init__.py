"""MuJoCo simulation of the quadruped climber: worlds, grippers, servos, the simulator."""
