"""What the explorer raises when a caller asks for something that is not there.

They extend core_compiler's one hierarchy, so a UI catches `UsageError` for "the request was wrong"
and lets anything else surface as a bug.
"""

from __future__ import annotations

from core_compiler.errors import HexploreError, UsageError


class UnknownDocument(UsageError):
    """No open document has this URI (or path)."""


class UnknownFunction(UsageError):
    """The document defines no function of this name (in its latest analysed version)."""


class UnknownPass(UsageError):
    """The function's pass trace has no pass of this name."""


class Cancelled(HexploreError):
    """The work was superseded (a newer version of the document arrived) or the document closed."""
