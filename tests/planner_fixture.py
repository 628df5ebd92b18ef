"""The small planner catalog (tests/fixtures/planner/catalog.json) and a Reader over it, as fixtures shared by
the reading and the mention-linking specifications (import them into a test module to use them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.reading import Reader
from core.records import Resource

CATALOG = Path(__file__).parent / "fixtures" / "planner" / "catalog.json"


@pytest.fixture(scope="module")
def resources() -> list[Resource]:
    return [Resource.from_dict(d) for d in json.loads(CATALOG.read_text(encoding="utf-8"))["resources"]]


@pytest.fixture(scope="module")
def reader(resources: list[Resource]) -> Reader:
    return Reader(resources)
