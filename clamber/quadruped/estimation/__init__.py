"""State estimation: leg odometry, contact detection and the anchor EKF."""
