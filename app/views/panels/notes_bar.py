"""A bar above the central panel for what importing a file had to assume (unknown dimensions
taken as 1, ...): one line, so that it costs the DAG no row of boxes, which opens into the
whole list; shown until the user dismisses it or opens another file."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from slabscope.app.views.common.elided_label import ElidedLabel

MAX_SHOWN = 3  # notes named on the bar's one line; Details lists them all


class NotesBar(QWidget):
    """Import notes in a pale yellow bar: one elided line, a Details switch that lists every
    note, and a close button."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        self.setStyleSheet("NotesBar { background: #FFF4CE; border-bottom: 1px solid #E0C060; }")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = ElidedLabel()
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.hide()
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setToolTip("List every note")
        self.details_button.toggled.connect(self.details.setVisible)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        line = QHBoxLayout()
        line.addWidget(self.label, 1)
        line.addWidget(self.details_button)
        line.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(line)
        layout.addWidget(self.details)
        self.notes: tuple[str, ...] = ()
        self.hide()

    def show_notes(self, notes) -> None:
        """Show `notes` on one line, the list closed (hide the bar when there are none)."""
        self.notes = tuple(notes)
        shown = list(self.notes[:MAX_SHOWN])
        if len(self.notes) > MAX_SHOWN:
            shown.append(f"and {len(self.notes) - MAX_SHOWN} more")
        self.label.setText("Import notes: " + " · ".join(shown))
        self.details.setText("\n".join(self.notes))
        self.details_button.setChecked(False)
        self.setVisible(bool(self.notes))
