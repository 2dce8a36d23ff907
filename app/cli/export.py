"""`slabscope export FILE --png OUT [--svg OUT]`: draw a view of a plan to PNG and/or SVG, no
display needed. The timeline shows a run, so `--view timeline` needs `--run`."""

from __future__ import annotations

import argparse
from pathlib import Path

from slabscope import planner

from slabscope.app.cli.options import add_planning_options, conflicts_for, search_options
from slabscope.app.cli.plan import split_order
from slabscope.app.qt_binding import require_sound_binding
from slabscope.app.render import VIEWS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope export`."""
    parser.add_argument("file", help="graph file (.json, .onnx or MiniMalloc .csv)")
    parser.add_argument("--png", metavar="OUT", help="PNG file to write")
    parser.add_argument("--svg", metavar="OUT", help="SVG file to write (beside or instead of the PNG)")
    parser.add_argument("--view", choices=VIEWS, default="slab",
                        help="what to draw: slab bar, lifetime map, DAG, timeline or the whole "
                             "window (default: slab)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="pixels per logical pixel, e.g. 2 for HiDPI (default: 1)")
    parser.add_argument("--order", help="request order: buffer names separated by commas, "
                                        "placed first; the rest follow in the file's order")
    add_planning_options(parser)
    parser.add_argument("--capacity", type=int, help="slab capacity in bytes (a hard limit)")
    parser.add_argument("--width", type=int, help="view width in logical pixels")
    parser.add_argument("--height", type=int, help="view height in logical pixels")
    parser.add_argument("--run", action="store_true",
                        help="execute the plan first (NumPy, or CuPy on a GPU) so the timeline "
                             "and window show measured phases")
    parser.add_argument("--repeats", type=int, default=10, help="executes for --run (default 10)")


# QPainter draws on images of at most 32,767 pixels a side; past that Qt fails or the
# allocation alone runs out of memory.
MAX_PIXELS_PER_SIDE = 32_767
MAX_SCALE = 8.0


def _check_size(args) -> None:
    """A PlanError unless --scale, --width and --height give an image Qt can draw."""
    if not 0 < args.scale <= MAX_SCALE:  # NaN fails this too
        raise planner.PlanError(f"--scale must be positive and at most {MAX_SCALE:g}, "
                                f"got {args.scale:g}")
    for name in ("width", "height"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise planner.PlanError(f"--{name} must be positive, got {value}")
        if value is not None and value * args.scale > MAX_PIXELS_PER_SIDE:
            raise planner.PlanError(f"--{name} {value:,} at scale {args.scale:g} is over "
                                    f"{MAX_PIXELS_PER_SIDE:,} pixels")


def _check_targets(args) -> None:
    """A PlanError unless each output can be a regular file in an existing folder: Qt and libpng
    would otherwise print several lines of their own before failing (a folder, /dev/full)."""
    for kind, target in (("PNG", args.png), ("SVG", args.svg)):
        if target is None:
            continue
        path = Path(target)
        if path.exists() and not path.is_file():
            what = "a folder" if path.is_dir() else "not a regular file"
            raise planner.PlanError(f"cannot write {kind} {path}: {what}")
        if not path.parent.is_dir():
            raise planner.PlanError(f"cannot write {kind} {path}: no folder {path.parent}")


def run(args) -> int:
    """Plan the file, draw the chosen view offscreen and write the PNG and/or SVG; errors raise
    PlanError."""
    require_sound_binding()
    if args.png is None and args.svg is None:
        raise planner.PlanError("give --png OUT, --svg OUT or both")
    if args.view == "timeline" and not args.run:
        raise planner.PlanError("the timeline shows a measured run: add --run to execute the "
                                "plan first")
    graph = planner.load(args.file)
    order = split_order(args.order)
    conflicts = conflicts_for(args, graph)
    _check_size(args)
    _check_targets(args)
    if args.run:
        from slabscope.gpu.binding import check_executable

        check_executable(graph)  # before planning, which can take long on a large trace

    def plan_here() -> planner.Plan:
        return planner.plan(graph, algorithm=args.algorithm, order=order, capacity=args.capacity,
                            conflicts=conflicts, budget=args.budget, **search_options(args))

    from PySide6.QtCore import QSize
    from PySide6.QtGui import QImageReader

    from slabscope.app.render import DEFAULT_SIZES, ensure_application, export_view
    from slabscope.app.session import Session

    app = ensure_application()
    session = Session()
    session.budget = args.budget
    session.set_graph(graph, Path(args.file), order=order, algorithm=args.algorithm,
                      conflicts=conflicts, capacity=args.capacity)
    if session.plan is None:
        plan_here()  # raises the planner's own error (a capacity error exits 3)
        raise planner.PlanError(session.plan_error or "no plan")
    if args.algorithm == "search":
        # The session plans greedy algorithms exactly as `plan` does; search also takes a seed
        # and an iteration count, so its plan is drawn as the command line asked for it.
        session.plan = plan_here()
        session.sigPlanChanged.emit(None, session.plan)
    if args.run:
        from slabscope import gpu

        session.set_last_run(gpu.run(graph, repeats=args.repeats, algorithm=args.algorithm,
                                     conflicts=conflicts, request_order=order,
                                     capacity=args.capacity))
    default = DEFAULT_SIZES[args.view]
    size = QSize(args.width or default.width(), args.height or default.height())
    export_view(session, args.view, args.png, args.scale, size, svg=args.svg)
    app.processEvents()
    if args.png is not None:
        # The view may need more room than asked for; report the pixels actually written.
        written = QImageReader(str(args.png)).size()
        print(f"wrote {args.png} ({written.width()} x {written.height()} pixels, {args.view} view)")
    if args.svg is not None:
        print(f"wrote {args.svg} ({size.width()} x {size.height()} SVG, {args.view} view)")
    return 0
