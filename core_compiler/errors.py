"""The one exception hierarchy for *internal* errors.

User input never raises: problems in the user's code are remarks (see `remarks.py`).
"""


class HexploreError(Exception):
    """Base class of hexplore's internal errors."""


class InternalError(HexploreError):
    """A bug in hexplore: an invariant did not hold."""


class UsageError(HexploreError):
    """The caller asked for something impossible (unknown function, bad option value)."""
