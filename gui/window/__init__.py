"""The main window and the parts it is built from."""
