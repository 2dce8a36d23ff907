"""Running the session's graph in the background: one worker thread, progress, cancel, delivery.

The run uses the session's graph and planning settings (so its search phase re-plans and is
measured); the report is handed to `session.set_last_run` on the GUI thread. Starting a run
while one is going cancels the old one first; a report for a graph that is no longer the
session's is dropped. `gpu` (and CuPy) are imported on the worker thread, on first use.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QThread, Signal, Slot


class RunWorker(QObject):
    """Runs `gpu.run` once on its thread and reports through signals (never touches the session).

    `sigProgress(fraction, phase)`, then exactly one of `sigFinished(report)`, `sigFailed(message)`
    or `sigCancelled()`.
    """

    sigProgress = Signal(float, str)
    sigFinished = Signal(object)
    sigFailed = Signal(str)
    sigCancelled = Signal()

    def __init__(self, graph, settings: dict):
        super().__init__()
        self.graph = graph
        self.settings = settings
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the run to stop at its next check (between kernels' executes and phases)."""
        self._cancel.set()

    @Slot()
    def run(self) -> None:
        """Execute; every failure becomes a one-line message rather than an exception."""
        try:
            from slabscope import gpu

            report = gpu.run(self.graph, progress=self.sigProgress.emit,
                             cancelled=self._cancel.is_set, **self.settings)
        except Exception as exc:  # the thread must always end with one of the three signals
            from slabscope.gpu import RunCancelled

            if isinstance(exc, RunCancelled):
                self.sigCancelled.emit()
            else:
                self.sigFailed.emit(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        self.sigFinished.emit(report)


class RunController(QObject):
    """Starts and cancels runs of the session's graph; delivers reports to the session.

    Signals: `sigRunning(bool)`, `sigProgress(fraction, phase)`, `sigMessage(text)`.
    """

    sigRunning = Signal(bool)
    sigProgress = Signal(float, str)
    sigMessage = Signal(str)
    sigFailed = Signal(str)  # the failure's one-line message, for the timeline and a dialog

    def __init__(self, session, backend: str = "auto", repeats: int = 10,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.backend = backend
        self.repeats = repeats
        self._thread: QThread | None = None
        self._worker: RunWorker | None = None
        self._graph = None
        session.sigGraphChanged.connect(self.cancel)

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self._thread is not None

    def start(self) -> bool:
        """Run the session's graph with its settings; False (and a message) if there is none."""
        session = self.session
        if session.graph is None:
            self.sigMessage.emit("Nothing to run: open a graph first")
            return False
        self.cancel()
        self.wait()
        settings = dict(backend=self.backend, repeats=self.repeats, algorithm=session.algorithm,
                        conflicts=session.conflicts, request_order=list(session.order),
                        capacity=session.capacity)
        worker = RunWorker(session.graph, settings)
        thread = QThread(self)
        worker.moveToThread(thread)
        self._graph = session.graph
        thread.started.connect(worker.run)
        # Bound methods of this GUI-thread object, so each result arrives queued on the GUI thread.
        worker.sigProgress.connect(self.sigProgress)
        worker.sigFinished.connect(self._deliver)
        worker.sigFailed.connect(self._failed)
        worker.sigCancelled.connect(self._cancelled)
        for done in (worker.sigFinished, worker.sigFailed, worker.sigCancelled):
            done.connect(thread.quit)
        thread.finished.connect(self._thread_finished)
        self._thread, self._worker = thread, worker
        thread.start()
        self.sigRunning.emit(True)
        self.sigMessage.emit(f"Running {self._graph.name}…")
        return True

    def cancel(self) -> None:
        """Ask the current run, if any, to stop."""
        if self._worker is not None:
            self._worker.cancel()

    def shutdown(self) -> None:
        """Cancel and wait, so no run thread outlives the application."""
        self.cancel()
        self.wait()

    def wait(self, msecs: int = 30000) -> None:
        """Block until the current run's thread has ended (used before a new run and on close)."""
        if self._thread is not None:
            self._thread.wait(msecs)
            self._release(self._thread)

    def _deliver(self, report) -> None:
        if self.sender() is not self._worker or self._graph is not self.session.graph:
            return  # a superseded run, or a graph the session no longer shows
        self.session.set_last_run(report)
        v = report.verification
        verdict = "verified" if v is None or v.ok else "outputs differ"
        self.sigMessage.emit(f"Run finished on {report.backend}: {verdict}")

    def _failed(self, message: str) -> None:
        self.session.sigError.emit(f"Run failed: {message}")
        self.sigFailed.emit(message)

    def _cancelled(self) -> None:
        self.sigMessage.emit("Run cancelled")

    def _thread_finished(self) -> None:
        self._release(self.sender())

    def _release(self, thread) -> None:
        """Forget `thread` (and its worker) once it has ended, if it is still the current one."""
        if thread is None or thread is not self._thread:
            return
        worker = self._worker
        self._thread = self._worker = None
        thread.wait()
        worker.deleteLater()
        thread.deleteLater()
        self.sigRunning.emit(False)
