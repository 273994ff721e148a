"""Quick translate: a popup near the mouse for the selection or the clipboard, reached by a global shortcut,
"copy twice", clipboard watching or an external trigger (tray, `qiao popup`). Nothing here talks to the engine
directly: requests go to the worker's "popup" channel."""
