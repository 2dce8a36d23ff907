"""The graph model: nodes, buffers and their request order (`Graph`), a plan (`Plan`), the
allocator's record of a snapshot, reachability, and the interval and bitset helpers they share."""
