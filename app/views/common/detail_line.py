"""The line under a plot that describes the buffer under the pointer: a fixed height (so the plot
never jumps as the pointer moves) and text cut to fit, the whole of it in the tooltip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextLayout
from PySide6.QtWidgets import QLabel, QWidget

from slabscope.app.views.common.buffer_details import describe_buffer_line

LINES = 2


def detail_text(session, known, hint: str) -> str:
    """The hovered buffer's line, else the first selected buffer's, else `hint`; only buffers in
    `known` (those the plan on show places) are described."""
    for name in (session.hovered_buffer, *session.selection):
        if name is not None and name in known:
            return describe_buffer_line(session, name)
    return hint


class DetailLine(QLabel):
    """A plain-text label of exactly `LINES` lines: longer text ends in "…"."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self.setWordWrap(False)  # the wrapping is done here, to cut at the last line
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setFixedHeight(self.fontMetrics().lineSpacing() * LINES + 4)
        self.setMinimumWidth(40)
        self.setText(text)

    def full_text(self) -> str:
        """The whole text, as given to `setText`."""
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        """Show `text`, wrapped and cut to the label's lines."""
        self._full = text
        self.setToolTip(text if self._fitted(text) != text else "")
        super().setText(self._fitted(text))

    def resizeEvent(self, event) -> None:
        """Cut the text again for the new width."""
        super().resizeEvent(event)
        super().setText(self._fitted(self._full))

    def _fitted(self, text: str) -> str:
        """`text` broken into at most `LINES` lines of this width, the last elided."""
        width = max(self.width() - 4, 20)
        metrics = self.fontMetrics()
        layout = QTextLayout(text, self.font())
        layout.beginLayout()
        lines = []
        while len(lines) < LINES:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            lines.append((line.textStart(), line.textLength()))
        layout.endLayout()
        if not lines:
            return ""
        shown = [text[start:start + length].rstrip() for start, length in lines[:-1]]
        start = lines[-1][0]
        shown.append(metrics.elidedText(text[start:].replace("\n", " "),
                                        Qt.TextElideMode.ElideRight, width))
        return "\n".join(shown)
