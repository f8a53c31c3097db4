"""A run's time limit, and the share of it a search may take.

`run_function` gives its worker a `TimeLimit`: the run's seconds and when they end (wall-clock
``time.time()``, so that the worker, started a moment later, sees the same end). A search — the
race of CPU variants (`cpu_variants.race_variants`) — takes at most `race_budget()` of it, so the
run answers with the best it found, not with a time-out::

    TimeLimit.starting_now(120.0).race_budget()   # 40.0: a third of the limit, at most 60 s
"""

from __future__ import annotations

import time
from dataclasses import dataclass

RACE_SHARE = 1 / 3  # of a run's time limit, for its search
RACE_CAP_S = 60.0  # at most: a longer limit is room for a slow run, not for a longer search
LEFT_SHARE = 1 / 2  # of what is left when the search starts: the checks and the timing come after
FALLBACK_SHARE = 1.5  # times the original's time, kept after the search for a fallback as slow as it
RESERVE_S = 5.0  # of the limit, at most, kept for what comes after the search has its answer
RESERVE_SHARE = 0.1  # ... and at most this share of it


@dataclass(frozen=True)
class TimeLimit:
    """`seconds` in all, ending at `deadline` (``time.time()``)."""

    seconds: float
    deadline: float

    @staticmethod
    def starting_now(seconds: float) -> TimeLimit:
        return TimeLimit(seconds, time.time() + seconds)

    def race_budget(self, original_s: float = 0.0) -> float:
        """`RACE_SHARE` of the limit, at most `RACE_CAP_S`, at most `LEFT_SHARE` of what is left
        of it now (building and running the original came first), and at most what is left less
        `FALLBACK_SHARE` times `original_s`: where no variant finishes within the budget, the
        race runs the loops as written, about as slow as the original (`race_variants`)."""
        left = self.deadline - time.time()
        fallback = left - FALLBACK_SHARE * original_s
        return max(min(self.seconds * RACE_SHARE, RACE_CAP_S, left * LEFT_SHARE, fallback), 0.0)

    def answer_by(self) -> float:
        """When (``time.time()``) a search must have a result to answer with: the limit, less
        `RESERVE_S` (at most `RESERVE_SHARE` of it) for the checks and the report."""
        return self.deadline - min(RESERVE_S, self.seconds * RESERVE_SHARE)
