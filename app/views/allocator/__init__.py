"""The Allocator tab: what PyTorch's caching allocator reserved against the static plan."""
