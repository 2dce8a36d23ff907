"""Slab planning: give every buffer of a compute graph a byte offset in one slab.

Pure Python, no Qt and no GPU: `load` (or `load_snapshot` for a PyTorch memory snapshot),
`plan`, `lower_bound`, `verify`, and `schedule` (the execution order with the least peak).
"""

from .antichain import LowerBound
from .api import ALGORITHMS, lower_bound, plan, search_iterations
from .cancel import NEVER, Cancelled, CancelToken
from .conflict_model import CONFLICT_MODELS, ConflictModel, conflict_model
from .dag_model import DagConflicts
from .errors import CapacityError, PlanError
from .graph import Buffer, Graph, Node, align_up
from .graph_file import default_conflicts, graph_from_dict, load
from .plan import Placement, PlacementStep, Plan
from .scheduling import Schedule, schedule, with_schedule
from .serial_model import SerialConflicts
from .torch_snapshot import AllocatorTrace, load_snapshot
from .verify import Verification, verify

__all__ = [
    "ALGORITHMS", "AllocatorTrace", "Buffer", "CONFLICT_MODELS", "CancelToken", "Cancelled", "CapacityError",
    "ConflictModel", "DagConflicts", "Graph", "LowerBound", "NEVER", "Node", "Placement",
    "PlacementStep", "Plan", "PlanError", "Schedule", "SerialConflicts", "Verification", "align_up",
    "conflict_model", "default_conflicts", "graph_from_dict", "load", "load_snapshot",
    "lower_bound", "plan", "schedule", "search_iterations", "verify", "with_schedule",
]
