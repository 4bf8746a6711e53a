"""Gripper models shared by the robots: safe force regions and wrench spaces."""
