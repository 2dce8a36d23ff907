"""A bar above the central panel for what importing a file had to assume (unknown dimensions
taken as 1, ...): shown until the user dismisses it or opens another file."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

MAX_SHOWN = 3  # notes listed in the bar; the tooltip has them all


class NotesBar(QWidget):
    """Import notes in a pale yellow bar with a close button."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.setStyleSheet("NotesBar { background: #FFF4CE; border-bottom: 1px solid #E0C060; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.notes: tuple[str, ...] = ()
        self.hide()

    def show_notes(self, notes) -> None:
        """Show `notes` (hide the bar when there are none)."""
        self.notes = tuple(notes)
        shown = list(self.notes[:MAX_SHOWN])
        if len(self.notes) > MAX_SHOWN:
            shown.append(f"and {len(self.notes) - MAX_SHOWN} more (see the tooltip)")
        self.label.setText("Import notes: " + " · ".join(shown))
        self.setToolTip("\n".join(self.notes))
        self.setVisible(bool(self.notes))
