"""Replaying a plan's placement trace step by step: what the slab animation shows, without drawing."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, 1024.0, 4096.0)  # steps per second offered
MIN_INTERVAL_MS = 16  # one frame; faster speeds take several steps per tick instead
WHOLE_REPLAY_S = 20.0  # a plan's default speed replays all its steps in about this long
DEFAULT_SPEED = 2.0    # the least default speed (a plan of a few steps)
NO_TRACE = ("This plan carries no placement trace (very large plans are placed without one), "
            "so there are no steps to replay.")


def default_speed(steps: int) -> float:
    """The least offered speed that replays `steps` steps in about `WHOLE_REPLAY_S` seconds
    (pangu's 18,692 steps at 1,024 steps/s, the example's 7 at 2)."""
    wanted = steps / WHOLE_REPLAY_S
    return next((s for s in SPEEDS if s >= wanted and s >= DEFAULT_SPEED), SPEEDS[-1])


class PlacementReplay(QObject):
    """Walks through `Plan.steps` on a timer (never blocking) or by hand.

    `current_step` is the index of the step on show, or None when the whole plan is shown.
    `sigStepChanged(index|None)` fires on every move; `sigPlayingChanged(bool)` on play/pause.
    """

    sigStepChanged = Signal(object)
    sigPlayingChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.plan = None
        self.current_step: int | None = None
        self.speed = DEFAULT_SPEED
        self.speed_chosen = False  # until the user picks a speed, it follows the plan's length
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)

    # --- state ---------------------------------------------------------------------------

    @property
    def step(self):
        """The `PlacementStep` on show, or None."""
        if self.plan is None or self.current_step is None:
            return None
        return self.plan.steps[self.current_step]

    @property
    def narration(self) -> str:
        """One line saying what the step on show did (empty when showing the whole plan)."""
        step = self.step
        if step is None:
            return ""
        return f"step {step.request + 1} of {len(self.plan.steps)}: {step.narration()}"

    @property
    def unavailable_reason(self) -> str | None:
        """Why the replay cannot run (no plan, or a plan without a trace); None when it can."""
        if self.plan is None:
            return "No plan to replay."
        return None if self.plan.steps else NO_TRACE

    @property
    def step_count(self) -> int:
        """How many steps the plan's trace has (0 without a plan or a trace)."""
        return len(self.plan.steps) if self.plan is not None else 0

    @property
    def playing(self) -> bool:
        """Whether the timer is advancing the steps."""
        return self._timer.isActive()

    def highlighted_conflicts(self) -> tuple[str, ...]:
        """The placed buffers the current request had to avoid (outlined in the view)."""
        step = self.step
        return step.conflicts if step is not None else ()

    def placed_count(self) -> int:
        """How many requests are in the slab on show, counting the one being placed."""
        if self.plan is None:
            return 0
        return len(self.plan.steps) if self.current_step is None else self.current_step + 1

    # --- moves ---------------------------------------------------------------------------

    def set_plan(self, plan) -> None:
        """Replay `plan` from now on; a replay in progress keeps its step number where it can."""
        self.plan = plan
        if plan is not None and plan.steps and not self.speed_chosen:
            self.set_speed(default_speed(len(plan.steps)), chosen=False)
        if plan is None or not plan.steps:
            self.pause()
            self._go(None)
        elif self.current_step is not None:
            self._go(min(self.current_step, len(plan.steps) - 1))

    def step_forward(self) -> None:
        """Show the next request (the first one when showing the whole plan)."""
        if self.plan is None or not self.plan.steps:
            return
        if self.current_step is None:
            self._go(0)
        elif self.current_step + 1 < len(self.plan.steps):
            self._go(self.current_step + 1)

    def step_back(self) -> None:
        """Show the previous request (stays on the first one)."""
        if self.plan is None or not self.plan.steps:
            return
        last = len(self.plan.steps) - 1
        self._go(last if self.current_step is None else max(0, self.current_step - 1))

    def go_to(self, index: int) -> None:
        """Show step `index` (clamped to the trace); nothing happens without a trace."""
        if self.step_count:
            self._go(max(0, min(int(index), self.step_count - 1)))

    def play(self) -> None:
        """Advance on the timer at `speed` steps per second; restarts from the first at the end."""
        if self.plan is None or not self.plan.steps:
            return
        if self.current_step is None or self.current_step == len(self.plan.steps) - 1:
            self._go(0)
        self._timer.start(self._interval())
        self.sigPlayingChanged.emit(True)

    def pause(self) -> None:
        """Stop the timer and keep the current step on show."""
        if self._timer.isActive():
            self._timer.stop()
            self.sigPlayingChanged.emit(False)

    def toggle(self) -> None:
        """Pause when playing, play otherwise."""
        self.pause() if self.playing else self.play()

    def show_plan(self) -> None:
        """Stop replaying and show the whole plan."""
        self.pause()
        self._go(None)

    def set_speed(self, steps_per_second: float, chosen: bool = True) -> None:
        """Change the pace; takes effect at once while playing. A speed the user `chosen` stays
        for later plans; otherwise each plan gets `default_speed` of its length."""
        if steps_per_second <= 0:
            raise ValueError("speed must be positive")
        self.speed = steps_per_second
        self.speed_chosen = self.speed_chosen or chosen
        if self._timer.isActive():
            self._timer.setInterval(self._interval())

    def _interval(self) -> int:
        return max(MIN_INTERVAL_MS, round(1000 / self.speed))

    def steps_per_tick(self) -> int:
        """Steps taken on each timer tick: one, or several when the speed outruns the frame rate."""
        return max(1, round(self.speed * self._interval() / 1000))

    def _tick(self) -> None:
        if self.plan is None or not self.plan.steps:
            self.pause()
            return
        last = len(self.plan.steps) - 1
        current = -1 if self.current_step is None else self.current_step
        self._go(min(last, current + self.steps_per_tick()))
        if self.current_step == last:
            self.pause()

    def _go(self, index: int | None) -> None:
        if index != self.current_step:
            self.current_step = index
            self.sigStepChanged.emit(index)
