"""State estimation from what the robot senses (IMU, joint encoders, servo currents, contact
flags): contact detection, and the leg odometry and anchor EKF on one error-state core."""
