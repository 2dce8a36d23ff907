"""An executor for GUI tests that keeps each task until the test runs it."""

from __future__ import annotations


class HeldExecutor:
    """Keeps each task until the test runs it, as the background worker would later."""

    def __init__(self):
        self.tasks = []

    def submit(self, task) -> None:
        self.tasks.append(task)

    def cancel(self) -> None:
        for task in self.tasks:
            task.token.cancel()

    def run_next(self) -> None:
        """Run the oldest task here and deliver its outcome."""
        from slabscope.app.state.tasks import deliver, run_task

        task = self.tasks.pop(0)
        deliver(task, run_task(task))
