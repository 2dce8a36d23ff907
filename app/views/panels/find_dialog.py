"""Find (Ctrl+F): type part of a node's or buffer's name, pick a match, and every panel selects
it and scrolls to it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

MAX_MATCHES = 300  # listed at once; typing more narrows a 60,000-name graph quickly
KIND_ROLE = Qt.ItemDataRole.UserRole


class FindDialog(QDialog):
    """A search field over the session graph's node and buffer names, and the matches."""

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.setWindowTitle("Find node or buffer")
        self.field = QLineEdit()
        self.field.setPlaceholderText("part of a node or buffer name")
        self.field.textChanged.connect(self.search)
        self.field.returnPressed.connect(self.choose_current)
        self.matches = QListWidget()
        self.matches.itemActivated.connect(self.choose)
        self.count = QLabel()
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.matches, 1)
        layout.addWidget(self.count)
        self.resize(420, 460)

    def open_find(self) -> None:
        """Show the dialog with the field selected, ready for typing."""
        self.search(self.field.text())
        self.show()
        self.raise_()
        self.field.setFocus()
        self.field.selectAll()

    def search(self, text: str) -> list[tuple[str, str]]:
        """List the (kind, name) of nodes and buffers whose names contain `text` (any case)."""
        graph = self.session.graph
        self.matches.clear()
        if graph is None:
            self.count.setText("no graph open")
            return []
        needle = text.strip().lower()
        found = [("node", n.name) for n in graph.nodes if needle in n.name.lower()]
        found += [("buffer", b.name) for b in graph.buffers if needle in b.name.lower()]
        for kind, name in found[:MAX_MATCHES]:
            item = QListWidgetItem(f"{name}   ({kind})")
            item.setData(KIND_ROLE, (kind, name))
            self.matches.addItem(item)
        if found:
            self.matches.setCurrentRow(0)
        shown = f", first {MAX_MATCHES} listed" if len(found) > MAX_MATCHES else ""
        self.count.setText(f"{len(found):,} match{'es' * (len(found) != 1)}{shown}; "
                           f"Enter shows it and closes")
        return found

    def choose_current(self) -> None:
        """Reveal the highlighted match and close, so that it is not covered (Enter in the
        field)."""
        item = self.matches.currentItem()
        if item is not None:
            self.choose(item)
            self.hide()

    def choose(self, item: QListWidgetItem) -> None:
        """Select `item`'s node or buffer in every panel and scroll each to it."""
        kind, name = item.data(KIND_ROLE)
        self.session.selection_model.reveal(kind, name)
