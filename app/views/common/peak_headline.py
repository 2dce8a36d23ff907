"""The headline figures every panel leads with, in the one vocabulary of docs/peak.md: the live
peak (and its step), the slab, the lower bound and the gap, and for a snapshot PyTorch's
reserved bytes against the static plan. "Without reuse" comes last, as a secondary figure."""

from __future__ import annotations

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.buffer_names import buffer_users
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.planner.analysis.peak import LivePeak, live_peak

# One live peak per graph, found by the loading worker (`use_live_peak`), never on the GUI thread,
# from the first users the buffer names use too (a 1M-row trace's take 0.6 s).
graph_live_peak = IdentityCache(lambda graph: live_peak(graph, buffer_users(graph)), size=2)


def use_live_peak(session) -> None:
    """Have the loading worker find each graph's live peak as it loads."""
    if graph_live_peak not in session.prepare_graphs:
        session.prepare_graphs.append(graph_live_peak)


def session_live_peak(session) -> LivePeak | None:
    """The live peak of the session's graph (None without one)."""
    return graph_live_peak(session.graph) if session.graph is not None else None


def peak_text(peak: LivePeak) -> str:
    """"5.1 GiB at step 4,096 (node)": the live peak and where it is first reached."""
    where = f" ({peak.node})" if peak.node else ""
    return f"{format_bytes(peak.bytes)} at step {peak.step:,}{where}"


def reserved_text(recorded: int, slab: int) -> str:
    """"PyTorch reserved X; a static plan needs Y (-Z%)"."""
    change = (slab - recorded) / recorded if recorded else 0.0
    sign = "\u2212" if change < 0 else "+"  # a real minus sign, as in the wording
    return (f"PyTorch reserved {format_bytes(recorded)}; a static plan needs "
            f"{format_bytes(slab)} ({sign}{abs(change):.1%})")


def headline_rows(session) -> list[tuple[str, str]]:
    """(label, value) pairs, plain text, of the plan on show: live peak, slab, lower bound with the gap,
    PyTorch reserved for a snapshot, then without reuse. Empty without a graph and a plan."""
    graph, plan = session.graph, session.shown_plan
    if graph is None or plan is None:
        return []
    peak = session_live_peak(session)
    rows = [("live peak", peak_text(peak)),
            ("slab", f"{format_bytes(plan.slab_bytes)} ({plan.slab_bytes:,} B)")]
    bound = session.lower_bound()
    if bound is not None:
        gap = plan.slab_bytes / bound.bytes - 1 if bound.bytes else 0.0
        rows.append(("lower bound", f"{format_bytes(bound.bytes)} ({bound.bytes:,} B); gap "
                                    f"{format_bytes(plan.slab_bytes - bound.bytes)} ({gap:.1%})"))
    if graph.allocator is not None:
        rows.append(("reserved", reserved_text(graph.allocator.peak_reserved_bytes,
                                               plan.slab_bytes)))
    saved = plan.saved_bytes / plan.no_reuse_bytes if plan.no_reuse_bytes else 0.0
    rows.append(("without reuse", f"{format_bytes(plan.no_reuse_bytes)} ({plan.no_reuse_bytes:,} B); "
                                  f"the slab saves {plan.saved_bytes:,} B ({saved:.1%})"))
    return rows


def headline_line(session) -> str:
    """The headline on one line, for the status bar: "live peak … · slab … · bound … (gap …)",
    PyTorch reserved for a snapshot; empty without a graph and a plan."""
    graph, plan = session.graph, session.shown_plan
    if graph is None or plan is None:
        return ""
    parts = [f"live peak {peak_text(session_live_peak(session))}",
             f"slab {format_bytes(plan.slab_bytes)} ({plan.slab_bytes:,} B)"]
    bound = session.lower_bound()
    if bound is not None:
        gap = plan.slab_bytes / bound.bytes - 1 if bound.bytes else 0.0
        parts.append(f"bound {format_bytes(bound.bytes)} (gap {gap:.1%})")
    if graph.allocator is not None:
        parts.append(reserved_text(graph.allocator.peak_reserved_bytes, plan.slab_bytes))
    return " · ".join(parts)
