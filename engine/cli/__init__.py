"""The `qiao` command line's engine commands."""
