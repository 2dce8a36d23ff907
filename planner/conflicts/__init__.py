"""Which buffers may be live together: the DAG model (strict reachability), the serial model (one
schedule), the lower bound on any slab (the heaviest antichain) and live bytes per step."""
