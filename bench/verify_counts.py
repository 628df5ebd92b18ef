"""How often the counted-number check (assistant/verify.py `miscounted`) and the points-ahead check
(assistant/sentences.py `points_ahead`) would drop a sentence the model wrote: every distinct cited sentence of
the answer-quality runs kept in docs/measurements (product and naive), the counted numbers checked against the
whole extracted text of the pages it cites. The live check sees only the picked passages; the whole page is the
generous side, so a sentence flagged here is flagged there too. Also: how many of the archive's page sentences
point ahead (the extractive answer and the pointer answer's quote skip them).

    .venv/bin/python bench/verify_counts.py [--runs 'docs/measurements/answer_quality*.json'] [--out F]
"""

from __future__ import annotations

import argparse
import glob
import json
import re
from pathlib import Path

from common import DEFAULT_HOME, ROOT, real_corpus_settings, write_report

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=\])\s+(?=[A-Z])")
_CITED = re.compile(r"\[(\d{1,3})\]")


def cited_sentences(run_files: list[Path]) -> list[tuple[str, list[str]]]:
    """(sentence, cited resource ids) for each distinct cited sentence of the runs' answers."""
    seen: set[str] = set()
    out = []
    for path in run_files:
        rows = json.loads(path.read_text(encoding="utf-8")).get("rows", {})
        for pipeline in ("product", "naive"):
            for row in rows.get(pipeline, []) if isinstance(rows, dict) else []:
                by_n = {s["n"]: s["resource_id"] for s in row.get("sources", [])}
                for sentence in _SENTENCE_END.split(row.get("answer", "")):
                    ids = [by_n[int(n)] for n in _CITED.findall(sentence) if int(n) in by_n]
                    if ids and sentence not in seen:
                        seen.add(sentence)
                        out.append((sentence, ids))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--runs", default=str(ROOT / "docs" / "measurements" / "answer_quality*.json"))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    from assistant.evidence import EvidenceSentence, EvidenceSource
    from assistant.sentences import points_ahead, sentences
    from assistant.verify import miscounted, quantities
    from index.records import ResourceHit
    from ingest.catalog import load_catalog
    from ingest.store import ChunkStore

    settings = real_corpus_settings(args.home)
    texts = {d.resource_id: d.text for d in ChunkStore(settings.store_file).documents()}
    catalog = {r.id: r for r in load_catalog()}
    runs = sorted(Path(p) for p in glob.glob(args.runs))
    claims = cited_sentences(runs)
    counted = flagged = 0
    examples = []
    for sentence, ids in claims:
        if quantities(sentence):
            counted += 1
        if ids[0] not in catalog:
            continue
        sents = [s for rid in ids for s in sentences(texts.get(rid, ""))]
        page = EvidenceSource(1, ResourceHit(catalog[ids[0]], 1.0),
                              [EvidenceSentence(t, 0, (0, i), 1.0, position=i) for i, t in enumerate(sents)])
        if numbers := miscounted(sentence, page):
            flagged += 1
            examples.append({"sentence": sentence, "numbers": numbers, "cites": ids})
    ahead = [sentence for sentence, _ in claims if points_ahead(sentence)]
    page_sentences = [s for text in texts.values() for s in sentences(text)]
    write_report({"runs": [p.name for p in runs], "cited_sentences": len(claims),
                  "with_a_counted_number": counted, "dropped_by_miscounted": flagged, "dropped": examples,
                  "dropped_by_points_ahead": len(ahead), "points_ahead": ahead,
                  "page_sentences": len(page_sentences),
                  "page_sentences_pointing_ahead": sum(1 for s in page_sentences if points_ahead(s))}, args.out)


if __name__ == "__main__":
    main()
