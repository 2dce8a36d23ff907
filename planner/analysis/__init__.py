"""Questions asked of a plan once made: whether it is valid (`verify`)."""
