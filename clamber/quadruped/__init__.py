"""MARCBot-style quadruped climber: robot model, kinematics, wrench QP and controllers."""
