"""Model makers: the tiny local model used by tests and the quickstart."""
