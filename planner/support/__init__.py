"""What every part of the planner leans on: its errors, cancel tokens, pausing the garbage
collector, atomic writes of outputs, counts in words, and the numba cache. Imports nothing else
of the planner."""
