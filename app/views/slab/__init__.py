"""The slab bar: every buffer at its offset over its lifetime, its lanes and the replay's section."""
