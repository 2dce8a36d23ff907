"""Slab planning: give every buffer of a compute graph a byte offset in one slab.

Pure Python, no Qt and no GPU: `load` (or `load_snapshot` for a PyTorch memory snapshot),
`plan`, `lower_bound`, `verify`, `explain` (what is live at the live peak and what would make
it smaller), `diff` (two runs compared), and `schedule` (the execution order with the least
peak).

The parts, each a folder that imports only from the folders listed before it:
`support` (errors, cancel tokens, atomic writes, the numba cache), `model` (graph and plan),
`conflicts` (which buffers may share bytes, the lower bound, live bytes), `placement` (first and
best fit, exact and randomised search), `formats` (the readers, their safety layers in
`formats/safety`), `schedule` (execution orders), `allocator` (PyTorch's caching allocator) and
`analysis` (questions asked of a plan), `recording` (a live training step recorded at the ATen
dispatch level; needs torch). `api` and `torch_trace` sit above them all.
"""

from .analysis.diff import Diff, diff
from .analysis.explain import Explanation, Lever, explain
from .analysis.verify import Verification, verify
from .api import ALGORITHMS, lower_bound, plan, search_iterations
from .conflicts.antichain import LowerBound
from .conflicts.conflict_model import CONFLICT_MODELS, ConflictModel, conflict_model, default_conflicts
from .conflicts.dag_model import DagConflicts
from .conflicts.serial_model import SerialConflicts
from .formats.graph_file import graph_from_dict, load
from .formats.torch_snapshot import load_snapshot
from .model.allocator_trace import AllocatorTrace
from .model.graph import Buffer, Graph, Node, align_up
from .model.plan import Placement, PlacementStep, Plan
from .schedule.scheduling import Schedule, schedule, with_schedule
from .support.cancel import NEVER, Cancelled, CancelToken
from .support.errors import CapacityError, PlanError

__all__ = [
    "ALGORITHMS", "AllocatorTrace", "Buffer", "CONFLICT_MODELS", "CancelToken", "Cancelled", "CapacityError",
    "ConflictModel", "DagConflicts", "Diff", "Explanation", "Graph", "Lever", "LowerBound", "NEVER", "Node",
    "Placement", "PlacementStep", "Plan", "PlanError", "Schedule", "SerialConflicts", "Verification",
    "align_up", "conflict_model", "default_conflicts", "diff", "explain", "graph_from_dict", "load",
    "load_snapshot", "lower_bound", "plan", "schedule", "search_iterations", "verify", "with_schedule",
]
