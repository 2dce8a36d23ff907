"""An editable combo box of names that holds its (possibly 60,000) items only once the user opens
it, types in it or looks one up: filling it costs a stall the window should not pay per file."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget


class LazyNameCombo(QComboBox):
    """A combo box whose items are `placeholder` and then `set_names`' names, added on first use
    (popup, focus, `findText`); until then it shows a name as its edit text."""

    def __init__(self, placeholder: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setEditable(True)  # type to find a buffer among hundreds
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._placeholder = placeholder
        self._names: tuple[str, ...] = ()
        self.filled = True
        self.set_names(())

    def set_names(self, names) -> None:
        """Offer `names` (after the placeholder), added to the list when first needed."""
        self._names = tuple(names)
        self.blockSignals(True)
        try:
            self.clear()
            self.addItem(self._placeholder)
        finally:
            self.blockSignals(False)
        self.filled = not self._names

    def show_name(self, name: str) -> None:
        """Show `name` as the pick without filling the list (no signal is emitted)."""
        self.blockSignals(True)
        try:
            if self.filled:
                self.setCurrentIndex(super().findText(name, Qt.MatchFlag.MatchExactly))
            else:
                self.setEditText(name)
        finally:
            self.blockSignals(False)

    def fill(self) -> None:
        """Add the names now (once), keeping what is shown."""
        if self.filled:
            return
        shown = self.currentText()
        self.blockSignals(True)
        try:
            self.addItems(self._names)
            self.filled = True
            index = super().findText(shown, Qt.MatchFlag.MatchExactly)
            if index >= 0:
                self.setCurrentIndex(index)
            else:
                self.setEditText(shown)
        finally:
            self.blockSignals(False)

    def findText(self, text, flags=Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchCaseSensitive):  # noqa: N802
        """`QComboBox.findText`, over every name."""
        self.fill()
        return super().findText(text, flags)

    def showPopup(self) -> None:  # noqa: N802 (Qt's name)
        """Fill the list before it opens."""
        self.fill()
        super().showPopup()

    def focusInEvent(self, event) -> None:  # noqa: N802
        """Fill the list when the user is about to type, so completion finds every name."""
        self.fill()
        super().focusInEvent(event)
