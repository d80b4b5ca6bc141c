"""The one error a target raises when it fails (its own module: the wire client raises it too, and
importing the whole contract from there would make a circle)."""

from __future__ import annotations


class TargetError(Exception):
    """The target failed (crashed, hung, answered garbage): not a conformance verdict."""


class NotRun(TargetError):
    """The target declined the step for a reason of the run, not of the system under check (the
    user's request budget is spent): the test is skipped as not run, never a finding."""
