"""The documents panel and its queue."""
