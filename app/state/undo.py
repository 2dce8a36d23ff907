"""A plain-Python undo stack: commands with `redo()`/`undo()`, a clean mark, evented changes.

It keeps the method names of Qt's QUndoStack (`push`, `undo`, `redo`, `canUndo`, `isClean`,
`setClean`, `count`, ...) so code written against that stack reads the same, but it imports no
Qt: the session that owns it is built and edited without a QApplication. The window makes its
Undo and Redo actions from the signals below.
"""

from __future__ import annotations

from contextlib import contextmanager

from psygnal import Signal


class UndoCommand:
    """One undoable edit. Subclasses implement `redo()` (apply; also called on push) and `undo()`."""

    def __init__(self, text: str):
        self._text = text

    def text(self) -> str:
        """What the edit did, for "Undo <text>" menu entries."""
        return self._text

    def redo(self) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError


class UndoStack:
    """A linear history of `UndoCommand`s with a current index and a clean index.

    Signals: `indexChanged(int)`, `cleanChanged(bool)`, `canUndoChanged(bool)`,
    `canRedoChanged(bool)`, `undoTextChanged(str)`, `redoTextChanged(str)`, each emitted only
    when its value changes, after the command ran.
    """

    indexChanged = Signal(int)
    cleanChanged = Signal(bool)
    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)
    undoTextChanged = Signal(str)
    redoTextChanged = Signal(str)

    def __init__(self, limit: int = 0):
        self._commands: list[UndoCommand] = []
        self._index = 0  # commands[:index] are applied
        self._clean: int | None = 0  # None: the clean state was dropped from the history
        self._limit = limit  # 0: unlimited

    # --- queries (QUndoStack's names) ------------------------------------------------------

    def count(self) -> int:
        """How many commands the history holds."""
        return len(self._commands)

    def index(self) -> int:
        """How many of them are applied."""
        return self._index

    def command(self, i: int) -> UndoCommand:
        """The `i`-th command of the history."""
        return self._commands[i]

    def canUndo(self) -> bool:
        return self._index > 0

    def canRedo(self) -> bool:
        return self._index < len(self._commands)

    def undoText(self) -> str:
        return self._commands[self._index - 1].text() if self.canUndo() else ""

    def redoText(self) -> str:
        return self._commands[self._index].text() if self.canRedo() else ""

    def isClean(self) -> bool:
        """Whether the state is the one last marked clean (saved, or freshly opened)."""
        return self._index == self._clean

    # --- edits -------------------------------------------------------------------------------

    def push(self, command: UndoCommand) -> None:
        """Apply `command` and make it the newest; the commands that were undone are dropped."""
        with self._announcing():
            del self._commands[self._index:]
            if self._clean is not None and self._clean > self._index:
                self._clean = None
            command.redo()
            self._commands.append(command)
            self._index += 1
            if self._limit and len(self._commands) > self._limit:
                del self._commands[0]
                self._index -= 1
                self._clean = None if not self._clean else self._clean - 1

    def undo(self) -> None:
        """Undo the newest applied command (nothing when there is none)."""
        if self.canUndo():
            with self._announcing():
                self._index -= 1
                self._commands[self._index].undo()

    def redo(self) -> None:
        """Re-apply the oldest undone command (nothing when there is none)."""
        if self.canRedo():
            with self._announcing():
                self._commands[self._index].redo()
                self._index += 1

    def setClean(self) -> None:
        """Mark the current state clean (just saved)."""
        with self._announcing():
            self._clean = self._index

    def clear(self) -> None:
        """Forget the history; the current state becomes the clean one."""
        with self._announcing():
            self._commands.clear()
            self._index = self._clean = 0

    def _values(self) -> tuple:
        return (self._index, self.isClean(), self.canUndo(), self.canRedo(), self.undoText(),
                self.redoText())

    @contextmanager
    def _announcing(self):
        """Run an edit, then emit the signal of each observable value it changed."""
        before = self._values()
        yield
        signals = (self.indexChanged, self.cleanChanged, self.canUndoChanged,
                   self.canRedoChanged, self.undoTextChanged, self.redoTextChanged)
        for signal, old, new in zip(signals, before, self._values()):
            if old != new:
                signal.emit(new)
