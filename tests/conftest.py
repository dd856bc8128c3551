"""Shared fixtures: a Sandbox on an in-memory store, one on a file, a manual clock."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from jupyter_sandbox import ManualClock, Sandbox

# Properties over generated inputs: CI runs a bounded, reproducible profile;
# ``--hypothesis-profile=long`` (bench/stress) runs many more examples.
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=2_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def sb():
    sandbox = Sandbox()
    yield sandbox
    sandbox.close()


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "runs.sqlite"


@pytest.fixture
def clock():
    return ManualClock(start=1_700_000_000_000)


@pytest.fixture
def counted(sb):
    """A sandbox with a side-effecting action that counts its calls: ``counted.calls``."""
    calls: list = []

    @sb.action
    def record(value):
        calls.append(value)
        return {"recorded": value}

    sb.calls = calls
    return sb
