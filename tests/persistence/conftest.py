"""Fixtures of the persistence tests."""

from __future__ import annotations

import time

import pytest

from tests.support.states import Clock


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    frozen = Clock()
    monkeypatch.setattr(time, "time", frozen)
    return frozen

