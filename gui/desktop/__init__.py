"""Desktop integration: tray, autostart, single instance, the in-app API host."""
