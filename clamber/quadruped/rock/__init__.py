"""Generated rock walls: a fractal surface with knobs and ledges, and what a gripper holds on it."""
