"""The Qt side of the app's state: objects that run `app.state` work on Qt threads and timers
(background planning, runs, the placement replay), kept apart so that `app.state` stays Qt-free."""
