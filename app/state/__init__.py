"""What the window shows and edits, apart from any widget: the session, planning in the background,
the placement replay and runs."""
