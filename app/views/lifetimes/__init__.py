"""The lifetime map: each buffer's lifetime against its address."""
