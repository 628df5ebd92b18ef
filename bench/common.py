"""What the benchmarks share: the real corpus (shared archive + list), ingested and indexed once into a data dir
through the front object (assistant/guide.py), as the CLI and the app do."""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared"
WARC = SHARED / "corpus" / "guide-pages.warc.gz"
LIST = SHARED / "guide" / "README.md"
QUESTIONS = SHARED / "eval" / "dev-questions.jsonl"
DEFAULT_HOME = ROOT / ".bench-home"


def real_corpus_settings(home: Path = DEFAULT_HOME):  # noqa: ANN201 - Settings, imported lazily
    """Settings on a data dir holding the shared archive, ingested and indexed (done once, then reused)."""
    os.environ["GPUGUIDE_HOME"] = str(home)
    from assistant.guide import Guide
    from core.settings import load_settings

    settings = load_settings(home=home, crawl={"offline": True, "warcs": [str(WARC)]})
    guide = Guide(settings)
    if not guide.index_exists():
        from ingest.catalog import parse_source

        Guide(settings, resources=parse_source(str(LIST)).resources).ingest()
        guide.index()
    return settings


def real_corpus_guide(home: Path = DEFAULT_HOME):  # noqa: ANN201 - Guide, imported lazily
    """The front object over `real_corpus_settings` (what the CLI and the app call)."""
    from assistant.guide import Guide

    return Guide(real_corpus_settings(home))


def percentiles(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(1000 * s for s in samples_s)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(p95, 2), "max_ms": round(ms[-1], 2), "n": len(ms)}


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def write_report(report: dict, out: str | None) -> None:
    """Print the benchmark's JSON report, and write it to `out` when given (docs/measurements/…)."""
    text = json.dumps(report, indent=2)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    print(text)
