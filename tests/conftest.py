"""Hypothesis profiles: the default run draws a few hundred examples per recipe."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# CI draws the same examples every run, so a submission cannot fail on a new
# draw; local runs keep exploring (and keep failures in .hypothesis/).
settings.register_profile(
    "ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=3000)
settings.register_profile("quick", max_examples=25, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
