"""What the window shows and edits, apart from any widget and without Qt: the session, its
selection, undo, tasks and settings. The Qt objects that run this work (background planning, runs,
the placement replay) are in `app.qt`."""
