"""Choosing the execution order with the least live peak: the scheduling problem, list schedulers,
the bound, exact search over orders and local moves."""
