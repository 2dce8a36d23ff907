"""The window's panels (DAG, request list, inspector, slab bar, lifetime map, timeline) and the
pieces they share (axes, palette, legends, rectangle layers, PNG export)."""
