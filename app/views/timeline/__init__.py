"""Views over time: live bytes per step and the runner's measured timeline."""
