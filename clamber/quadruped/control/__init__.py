"""Control: the Q-WBC wrench problem and solver, the CLIK and VMC baselines, grasping."""
