"""Slab planning: give every buffer of a compute graph a byte offset in one slab.

Pure Python, no Qt and no GPU: `load`, `plan`, `verify` (and, as the planner grows,
`lower_bound`).
"""

from .conflicts import DagConflicts
from .errors import CapacityError, PlanError
from .graph import Buffer, Graph, Node, align_up
from .graph_file import default_conflicts, graph_from_dict, load
from .plan import Placement, PlacementStep, Plan
from .planning import ALGORITHMS, CONFLICT_MODELS, conflict_model, plan
from .verify import Verification, verify

__all__ = [
    "ALGORITHMS", "Buffer", "CONFLICT_MODELS", "CapacityError", "DagConflicts", "Graph", "Node",
    "Placement", "PlacementStep", "Plan", "PlanError", "Verification", "align_up",
    "conflict_model", "default_conflicts", "graph_from_dict", "load", "plan", "verify",
]
