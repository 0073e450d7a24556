"""Shared utilities: device selection, distributed setup, checkpoints, logging, rewards."""
