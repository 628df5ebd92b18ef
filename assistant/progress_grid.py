"""The guide tab's progress at a glance: one row per topic, one cell per tier (read / total, shaded by the share
read), the topic's total and the overall figure above. A separate template (`progress_grid.html`) so the
guide's other panels (reading states, time left) change without touching it.

Why a grid, not bars: 31 thin bars with rotated labels could not be read; a topic × tier table keeps the
list's own structure, shows the counts in place and needs no legend.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.app_state import ProgressRow
from assistant.render import render, tier_label


@dataclass
class Cell:
    label: str
    read: int
    total: int

    @property
    def percent(self) -> float:
        return 100.0 * self.read / self.total if self.total else 0.0


@dataclass
class GridRow:
    topic: str
    cells: list[Cell | None]  # one per column; None: the topic has nothing in that tier

    @property
    def read(self) -> int:
        return sum(c.read for c in self.cells if c)

    @property
    def total(self) -> int:
        return sum(c.total for c in self.cells if c)

    @property
    def percent(self) -> float:
        return 100.0 * self.read / self.total if self.total else 0.0


def progress_grid(rows: list[ProgressRow]) -> tuple[list[str], list[GridRow]]:
    """Columns (tiers ascending, "Untiered" last when any) and one row per topic in the list's order."""
    tiers = sorted({r.tier for r in rows if r.tier is not None})
    columns = [tier_label(t) for t in tiers] + (["Untiered"] if any(r.tier is None for r in rows) else [])
    topics: dict[str, dict[str, Cell]] = {}
    for row in rows:
        label = tier_label(row.tier)
        cells = topics.setdefault(row.topic, {})
        cell = cells.setdefault(label, Cell(label, 0, 0))
        cell.read += row.read
        cell.total += row.total
    return columns, [GridRow(topic, [cells.get(c) for c in columns]) for topic, cells in topics.items()]


def render_progress_grid(rows: list[ProgressRow]) -> str:
    columns, grid = progress_grid(rows)
    read, total = sum(r.read for r in rows), sum(r.total for r in rows)
    share = round(100 * read / total) if total else 0
    return render("progress_grid.html", columns=columns, grid=grid, read=read, total=total, share=share)
