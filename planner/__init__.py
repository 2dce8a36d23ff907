"""Slab planning: give every buffer of a compute graph a byte offset in one slab.

Pure Python, no Qt and no GPU: `load`, `plan`, `lower_bound`, `verify`.
"""

from .conflicts import DagConflicts
from .errors import CapacityError, PlanError
from .graph import Buffer, Graph, Node, align_up
from .graph_file import default_conflicts, graph_from_dict, load
from .lifetimes import SerialConflicts
from .lower_bound import LowerBound, lower_bound
from .plan import Placement, PlacementStep, Plan
from .planning import ALGORITHMS, CONFLICT_MODELS, conflict_model, plan
from .verify import Verification, verify

__all__ = [
    "ALGORITHMS", "Buffer", "CONFLICT_MODELS", "CapacityError", "DagConflicts", "Graph",
    "LowerBound", "Node", "Placement", "PlacementStep", "Plan", "PlanError", "SerialConflicts",
    "Verification", "align_up", "conflict_model", "default_conflicts", "graph_from_dict", "load",
    "lower_bound", "plan", "verify",
]
