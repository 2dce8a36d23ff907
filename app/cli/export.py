"""`slabscope export FILE --png OUT [--svg OUT]`: draw a view of a plan to PNG and/or SVG, no
display needed. The timeline shows a run, so `--view timeline` needs `--run`."""

from __future__ import annotations

import argparse
from pathlib import Path

from slabscope import planner
from slabscope.planner.support.atomic_write import check_outputs

from slabscope.app.cli.long_work import LongWork, add_timeout_option
from slabscope.app.cli.options import add_planning_options, conflicts_for, search_options
from slabscope.app.cli.plan import split_order
from slabscope.app.qt_binding import require_sound_binding
from slabscope.app.render import VIEWS
from slabscope.app.state.view_settings import ADDRESSES, COLOURINGS, SLAB_VIEWS, TABS, ViewSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope export`."""
    parser.add_argument("file", help="graph file (.json, .onnx or MiniMalloc .csv)")
    parser.add_argument("--png", metavar="OUT", help="PNG file to write")
    parser.add_argument("--svg", metavar="OUT", help="SVG file to write (beside or instead of the PNG)")
    parser.add_argument("--view", choices=VIEWS, default="slab",
                        help="what to draw: slab bar, lifetime map, DAG, timeline, the comparison "
                             "with --compare's file, or the whole window (default: slab)")
    parser.add_argument("--compare", metavar="B",
                        help="compare view: the second run (any file slabscope opens) set "
                             "against FILE")
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
    parser.add_argument("--addresses", choices=ADDRESSES, default="planned",
                        help="lifetime map of a PyTorch snapshot: planned offsets or PyTorch's "
                             "addresses (default: planned)")
    parser.add_argument("--slab-view", choices=SLAB_VIEWS,
                        help="slab bar: every buffer in lanes, or the buffers live at the peak "
                             "step (default: by the plan's size)")
    parser.add_argument("--tab", choices=TABS, default="slab",
                        help="window view: the bottom panel shown (default: slab)")
    parser.add_argument("--colours", choices=COLOURINGS, default="kind",
                        help="slab bar and lifetime map: colour buffers by kind (a snapshot's "
                             "categories) or a snapshot's blocks by first user frame "
                             "(default: kind)")
    add_timeout_option(parser)


# The largest image side `png_export.render_image` draws (larger images are slow and many viewers
# refuse them); checked before loading, not after seconds of drawing.
MAX_PIXELS_PER_SIDE = 16_384
MAX_SCALE = 8.0
MIN_SCALE = 0.1  # below this a view is a few pixels wide, and Qt complains about empty images


def _check_size(args) -> None:
    """A PlanError unless --scale, --width and --height give an image Qt can draw."""
    if not MIN_SCALE <= args.scale <= MAX_SCALE:  # NaN fails this too
        raise planner.PlanError(f"--scale must be positive, from {MIN_SCALE:g} to {MAX_SCALE:g}, "
                                f"got {args.scale:g}")
    for name in ("width", "height"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise planner.PlanError(f"--{name} must be positive, got {value}")
        if value is not None and round(value * args.scale) > MAX_PIXELS_PER_SIDE:
            raise planner.PlanError(f"--{name} {value:,} at scale {args.scale:g} is over "
                                    f"{MAX_PIXELS_PER_SIDE:,} pixels")
        if value is not None and round(value * args.scale) < 1:
            raise planner.PlanError(f"--{name} {value:,} at scale {args.scale:g} is under "
                                    f"one pixel")


def run(args) -> int:
    """Plan the file, draw the chosen view offscreen and write the PNG and/or SVG; errors raise
    PlanError."""
    require_sound_binding()
    if args.png is None and args.svg is None:
        raise planner.PlanError("give --png OUT, --svg OUT or both")
    if args.view == "timeline" and not args.run:
        raise planner.PlanError("the timeline shows a measured run: add --run to execute the "
                                "plan first")
    if (args.view == "compare") != (args.compare is not None):
        raise planner.PlanError("--view compare and --compare B go together")
    _check_size(args)
    # Before any work: never over the input, never one file for both pictures, never a FIFO.
    check_outputs([args.file, args.compare], [("PNG", args.png), ("SVG", args.svg)])
    # Loading, planning and drawing are bounded by --timeout and show progress on a terminal;
    # the views plan in their own tasks, so past the timeout the process ends (exit 3).
    with LongWork(args.file, args.timeout) as work:
        graph = planner.load(args.file, cancel=work.token)
        order = split_order(args.order)
        conflicts = conflicts_for(args, graph)
        if args.run:
            from slabscope.gpu.program import program_for

            # before planning, which can take long on a large trace
            program_for(args.file).check(graph)

        def plan_here() -> planner.Plan:
            return planner.plan(graph, algorithm=args.algorithm, order=order,
                                capacity=args.capacity, conflicts=conflicts,
                                cancel=work.token, **search_options(args, graph, conflicts))

        from PySide6.QtCore import QSize
        from PySide6.QtGui import QImageReader

        from slabscope.app.render import DEFAULT_SIZES, ensure_application, export_view
        from slabscope.app.state.session import Session

        work.token.report("planning and drawing")
        app = ensure_application()
        session = Session()
        chosen_search = search_options(args, graph, conflicts)  # what search takes besides
        session.budget = chosen_search["budget"]
        session.seed, session.iterations = chosen_search["seed"], chosen_search["iterations"]
        session.set_graph(graph, Path(args.file), order=order, algorithm=args.algorithm,
                          conflicts=conflicts, capacity=args.capacity)
        # The views are built after this, from these settings only (never from saved ones).
        session.view = ViewSettings(addresses=args.addresses, slab=args.slab_view, tab=args.tab,
                                    colours=args.colours)
        session.compare_path = Path(args.compare) if args.compare else None
        if session.plan is None:
            plan_here()  # raises the planner's own error (a capacity error exits 3)
            raise planner.PlanError(session.plan_error or "no plan")
        if args.run:
            from slabscope import gpu

            session.set_last_run(gpu.run(graph, repeats=args.repeats, algorithm=args.algorithm,
                                         conflicts=conflicts, request_order=order,
                                         capacity=args.capacity, model=args.file))
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
