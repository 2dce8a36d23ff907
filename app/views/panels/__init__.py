"""The window's side panels and dialogs: the inspector, the request list, find, shortcuts, notes,
the schedule controls, task progress and the Run menu."""
