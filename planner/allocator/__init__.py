"""A model of PyTorch's CUDA caching allocator, and its replay over a graph or a snapshot's events."""
