"""Errors that are the user's to fix: the CLI prints the message (no traceback) and exits with code 2."""

from __future__ import annotations


class UserError(Exception):
    """A bad config, a missing file, bad data: something the user fixes, not a bug in verl."""

    exit_code = 2
