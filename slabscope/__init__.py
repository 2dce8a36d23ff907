"""Slabscope: see, and trust, how a compute graph's buffers fit into one slab of GPU memory.

The installed distribution has this one top-level package. Its parts live in the repository's
top-level folders and are mapped under it by pyproject.toml's package-dir:
`slabscope.planner` (planner/), `slabscope.gpu` (gpu/), `slabscope.app` (app/) and the data in
`slabscope.assets` (assets/). This folder holds only the root modules.
"""
