"""The DAG panel: layout (in a worker), folding, groups, drawing, the minimap, the node panel, and
the central panel that shows the DAG or, for a trace, live bytes over time."""
