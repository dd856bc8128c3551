"""Shared fixtures: a Sandbox on an in-memory store, one on a file, a manual clock."""

from __future__ import annotations

import pytest

from jupyter_sandbox import ManualClock, Sandbox


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
