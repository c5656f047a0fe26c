"""The fixture of the multi-node cluster tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import ClusterNodes


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[ClusterNodes]:
    """Starts cluster nodes on demand (``create``, ``add_replica``); stops them after."""
    nodes = ClusterNodes(tmp_path)
    yield nodes
    nodes.stop()
