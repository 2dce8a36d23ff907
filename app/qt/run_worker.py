"""Running the session's graph in the background, on the "run" lane of the window's executor.

The run uses the session's graph and planning settings (so its search phase re-plans and is
measured); the report is handed to `session.set_last_run` on the GUI thread. Starting a run
while one is going cancels the old one (the new one starts once it has stopped); a report for a
graph that is no longer the session's is dropped. `gpu` (and CuPy) are imported on the worker
thread, on first use.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from slabscope.app.qt.task_executor import TaskLane
from slabscope.app.state.tasks import Task

KIND = "run"


class RunController(QObject):
    """Starts and cancels runs of the session's graph; delivers reports to the session.

    Signals: `sigRunning(bool)`, `sigProgress(fraction, phase)`, `sigMessage(text)`,
    `sigFailed(message)`. Runs go to `lane` (a "run" `TaskLane`; by default one of its own).
    """

    sigRunning = Signal(bool)
    sigProgress = Signal(float, str)
    sigMessage = Signal(str)
    sigFailed = Signal(str)  # the failure's one-line message, for the timeline and a dialog

    def __init__(self, session, backend: str = "auto", repeats: int = 10,
                 parent: QObject | None = None, lane: TaskLane | None = None):
        super().__init__(parent)
        self.session = session
        self.backend = backend
        self.repeats = repeats
        self.lane = lane if lane is not None else TaskLane(KIND, self)
        self._latest: Task | None = None
        self.lane.sigRunningChanged.connect(self.sigRunning)
        self.lane.sigProgress.connect(self._progress)
        self.lane.sigEnded.connect(self._ended)
        session.sigGraphChanged.connect(self.cancel)

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.lane.running

    def start(self) -> bool:
        """Run the session's graph with its settings; False (and a message) if there is none."""
        session = self.session
        if session.graph is None:
            self.sigMessage.emit("Nothing to run: open a graph first")
            return False
        graph = session.graph
        # a .pt2 or ONNX graph runs with its own framework, read from the file it came from
        settings = dict(backend=self.backend, repeats=self.repeats, algorithm=session.algorithm,
                        conflicts=session.conflicts, request_order=list(session.order),
                        capacity=session.capacity, model=session.path)

        def work(token):
            from slabscope import gpu

            return gpu.run(graph, progress=lambda fraction, phase: token.report(phase, fraction),
                           cancelled=lambda: token.cancelled, **settings)

        def done(report) -> None:
            if graph is not self.session.graph:
                return  # a graph the session no longer shows
            self.session.set_last_run(report)
            v = report.verification
            verdict = "verified" if v is None or v.ok else "outputs differ"
            self.sigMessage.emit(f"Run finished on {report.backend}: {verdict}")

        def failed(message: str) -> None:
            self.session.sigError.emit(f"Run failed: {message}")
            self.sigFailed.emit(message)

        self._latest = Task(f"Running {graph.name}", work, done, failed)
        self.lane.submit(self._latest)
        self.sigMessage.emit(f"Running {graph.name}…")
        return True

    def cancel(self) -> None:
        """Ask the current run, if any, to stop."""
        self.lane.cancel()

    def shutdown(self) -> None:
        """Cancel and wait, so no run thread outlives the application."""
        self.lane.shutdown()

    def _progress(self, task, phase: str, fraction) -> None:
        if fraction is not None:
            self.sigProgress.emit(fraction, phase)

    def _ended(self, task, how: str) -> None:
        if how == "cancelled" and task is self._latest:
            self.sigMessage.emit("Run cancelled")
