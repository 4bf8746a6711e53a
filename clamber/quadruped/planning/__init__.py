"""Hold selection on a mapped rock wall: the map, the candidate holds, the planners."""
