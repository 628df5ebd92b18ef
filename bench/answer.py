"""Answers from the packaged 1.5B model: how often its verified answer is shown, whether it cites the right
resource, how much verification drops, and how fast, over the real corpus. Prints one JSON object.

    .venv/bin/python bench/answer.py [--home DIR] [--sets dev synthetic] [--sample 20] [--seed 0] [--fold 4]
        [--no-llm] [--cli N] [--showcase FILE --docs docs/answers.md]

Per set (the dev set, reported only; a seeded sample of the synthetic set, from one fold):
* `llm_shown`: share of questions whose answer is the model's own verified text (not the quoted fallback);
* `gold_cited`: share whose citations include a gold resource; `citation_precision`: share of all citations
  that are gold (dev: gold or accepted);
* `dropped_share`: generated sentences removed by verification, over all generated sentences;
* `first_token_s`, `total_s`: p50/p95 of the time to the first streamed token and to the final answer
  (retrieval, evidence, prompt and generation; the model already loaded);
* `source_stated` (synthetic only): share of questions whose shown answer (the model's or the quoted one) has
  a sentence that says what a sentence of the passage the question was written from says (MiniLM cosine >=
  0.70, the key-point threshold of bench/answer_quality.py): the proxy for "the fact is stated";
  `planner_routed`: questions answered by the reading planner instead (a concept question never should be);
* evidence (no LLM needed, at the budget the embedded model gets from this machine's measured prompt speed):
  `gold_in_evidence` (a gold resource among the numbered sources) and, for synthetic questions,
  `source_in_evidence` (a sentence of the passage the question was written from).
`extractive` is the no-LLM baseline's latency in the same run; `cli` (with --cli N) is the wall time of
`gpuguide ask` as a user runs it, model load included. `machine` records the cores, the load average and
whether the background question generator was running, since both inflate every latency here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import DEFAULT_HOME, QUESTIONS, ROOT, peak_rss_mb, percentiles, real_corpus_settings

from core.files import atomic_write_text

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
DEV_KINDS = ("concept", "lookup", "typo")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def question_sets(names: list[str], sample: int, seed: int, fold: int, passages_only: bool = False) -> dict[str, list[dict[str, Any]]]:
    sets: dict[str, list[dict[str, Any]]] = {}
    if "dev" in names:
        sets["dev"] = [q for q in read_jsonl(QUESTIONS) if q["kind"] in DEV_KINDS]
    if "synthetic" in names and SYNTHETIC.exists():
        pool = [q for q in read_jsonl(SYNTHETIC)
                if q.get("fold") == fold and (not passages_only or q["kind"] == "synthetic-passage")]
        sets["synthetic"] = random.Random(seed).sample(pool, min(sample, len(pool)))
    return sets


def norm_url(url: str) -> str:
    return url.strip().rstrip("/").lower()


def is_gold(citation: Any, q: dict[str, Any]) -> bool:
    if q.get("resource_id") and citation.resource_id == q["resource_id"]:
        return True
    gold = {norm_url(u) for u in [*q.get("gold", []), *q.get("accept", [])]}
    return norm_url(citation.url) in gold


def p50_p95(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2)}


def evidence_row(assistant: Any, q: dict[str, Any]) -> dict[str, Any]:
    question = q["question"]
    hits = assistant.searcher.search(question, k=5)
    # the budget the embedded model gets on this machine (its measured prompt speed), as the answers below
    evidence = assistant.selector.select(question, hits, assistant.settings.llm,
                                         assistant.evidence_budget(question, "embedded"))
    chunk_ids = {sent.chunk_id for s in evidence.sources for sent in s.sentences}
    return {
        "gold_in_evidence": any(is_gold(_AsCitation(s.resource), q) for s in evidence.sources),
        "source_in_evidence": (q.get("source_chunk") in chunk_ids) if q.get("source_chunk") else None,
        "evidence_tokens": evidence.tokens,
        "evidence_sentences": sum(len(s.sentences) for s in evidence.sources),
    }


class _AsCitation:
    """A resource seen through the fields `is_gold` reads."""

    def __init__(self, res: Any) -> None:
        self.resource_id, self.url = res.id, res.url


STATED_COSINE = 0.70  # as answer_quality.COVER_COSINE: same-fact paraphrases sit above it


def source_stated(assistant: Any, q: dict[str, Any], text: str) -> bool | None:
    """Does an answer sentence say what a sentence of the question's source passage says?"""
    from assistant.sentences import sentences

    chunk_id = q.get("source_chunk")
    if not chunk_id:
        return None
    chunk = next((c for c in assistant.searcher.chunks if c.chunk_id == chunk_id), None)
    said = sentences(re.sub(r"\s*\[\d+(?:\s*,\s*\d+)*\]", "", text))
    if chunk is None or not said:
        return False if chunk is not None else None
    source = sentences(chunk.text) or [chunk.text]
    vecs = assistant.searcher.embedder.encode_uncached(source + said)
    sims = vecs[: len(source)] @ vecs[len(source):].T
    return bool(sims.max() >= STATED_COSINE)


def streamed(assistant: Any, question: str) -> tuple[Any, Any, float | None, float]:
    """The final answer, the answer that stood before a second draft (the final one when none was written:
    the second draft's A/B in the same run, on the same evidence), the first token's time and the whole
    answer's time."""
    from assistant.chain import Query

    started = time.perf_counter()
    first = None
    final = standing = None
    for event in assistant.stream(Query(question, backend="embedded")):
        if event.kind == "token" and first is None:
            first = time.perf_counter() - started
        elif event.kind == "redraft":
            standing = event.answer
        elif event.kind == "final":
            final = event.answer
    assert final is not None
    return final, standing or final, first, time.perf_counter() - started


def is_shown(final: Any) -> bool:
    """The model's own answer is shown (not the pointer answer, not a fallback)."""
    return final.route == "search" and final.backend == "embedded" and not final.fallback


def llm_row(assistant: Any, q: dict[str, Any]) -> dict[str, Any]:
    from assistant.chain import KEY_PASSAGE_LEAD
    from assistant.verify import split_claims

    final, alone, first, total = streamed(assistant, q["question"])
    shown = is_shown(final)
    kept = len(split_claims(final.text)) if shown else 0
    return {
        "id": q.get("id"),
        "question": q["question"],
        "route": final.route,
        "llm_shown": shown,
        "fallback": final.fallback,
        "weak": final.weak,
        "gold_cited": any(is_gold(c, q) for c in final.citations),
        "citations": len(final.citations),
        "gold_citations": sum(is_gold(c, q) for c in final.citations),
        "kept": kept,
        "dropped": len(final.dropped),
        "dropped_sentences": [[d.text, d.reason] for d in final.dropped],
        "first_token_s": round(first, 2) if first is not None else None,
        "total_s": round(total, 2),
        "answer": final.text,
        "draft": final.draft,  # the model's raw text: verification changes can be replayed on it
        "redraft": final.redraft,
        "llm_shown_without_redraft": is_shown(alone),
        "source_stated_without_redraft": source_stated(assistant, q, alone.text) if alone is not final else None,
        "source_stated": source_stated(assistant, q, final.text),
        # the same answer without its quoted key passage (chain.KEY_PASSAGE_LEAD): the feature's A/B in one run
        "key_passage": KEY_PASSAGE_LEAD in final.text,
        "source_stated_without_key": source_stated(assistant, q, final.text.split(KEY_PASSAGE_LEAD)[0]),
        "control_token": "<|" in final.text or "NO_ANSWER" in final.text,
    }


def _stated(rows: list[dict[str, Any]]) -> dict[str, Any]:
    known = [r["source_stated"] for r in rows if r["source_stated"] is not None]
    if not known:
        return {}
    without = [r.get("source_stated_without_key") for r in rows if r["source_stated"] is not None]
    without_redraft = [r["source_stated"] if r.get("source_stated_without_redraft") is None
                       else r["source_stated_without_redraft"] for r in rows if r["source_stated"] is not None]
    return {"source_stated": round(sum(known) / len(known), 3), "source_stated_count": f"{sum(known)}/{len(known)}",
            "source_stated_without_key_count": f"{sum(bool(w) for w in without)}/{len(known)}",
            "source_stated_without_redraft_count": f"{sum(bool(w) for w in without_redraft)}/{len(known)}",
            "key_passages": sum(r.get("key_passage", False) for r in rows)}


def summarise(rows: list[dict[str, Any]], ev_rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(ev_rows)}
    if ev_rows:
        out["gold_in_evidence"] = round(sum(r["gold_in_evidence"] for r in ev_rows) / len(ev_rows), 3)
        src = [r["source_in_evidence"] for r in ev_rows if r["source_in_evidence"] is not None]
        if src:
            out["source_in_evidence"] = round(sum(src) / len(src), 3)
        out["evidence_tokens_mean"] = round(statistics.mean(r["evidence_tokens"] for r in ev_rows), 1)
    if rows:
        n = len(rows)
        generated = sum(r["kept"] + r["dropped"] for r in rows)
        cites = sum(r["citations"] for r in rows)
        out |= {
            "llm_shown": round(sum(r["llm_shown"] for r in rows) / n, 3),
            "llm_shown_count": f"{sum(r['llm_shown'] for r in rows)}/{n}",
            "redrafts": sum(bool(r.get("redraft")) for r in rows),
            "llm_shown_without_redraft_count": f"{sum(r.get('llm_shown_without_redraft', r['llm_shown']) for r in rows)}/{n}",
            **_stated(rows),
            "gold_cited": round(sum(r["gold_cited"] for r in rows) / n, 3),
            "gold_cited_count": f"{sum(r['gold_cited'] for r in rows)}/{n}",
            "citation_precision": round(sum(r["gold_citations"] for r in rows) / cites, 3) if cites else None,
            "dropped_share": round(sum(r["dropped"] for r in rows) / generated, 3) if generated else None,
            "abstained": sum(r["route"] == "abstain" for r in rows),
            "planner_routed": sum(r["route"] == "next" for r in rows),
            "weak": sum(r["weak"] for r in rows),
            "control_tokens": sum(r["control_token"] for r in rows),
            "first_token_s": p50_p95([r["first_token_s"] for r in rows if r["first_token_s"] is not None]),
            "total_s": p50_p95([r["total_s"] for r in rows]),
            "fallbacks": sorted({r["fallback"] for r in rows if r["fallback"]}),
        }
    return out


def cli_times(home: Path, questions: list[str]) -> dict[str, Any]:
    """`gpuguide ask` wall time per question, a fresh process each time (model load included)."""
    times = []
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    for question in questions:
        started = time.perf_counter()
        subprocess.run([str(ROOT / ".venv" / "bin" / "gpuguide"), "ask", question], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return {"runs": [round(t, 1) for t in times], **p50_p95(times)}


def machine() -> dict[str, Any]:
    generator = subprocess.run(["pgrep", "-f", "synth_questions"], capture_output=True, text=True).stdout.split()
    return {
        "cores": len(os.sched_getaffinity(0)),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "question_generator_running": bool([p for p in generator if int(p) != os.getpid()]),
    }


def showcase(assistant: Any, path: Path, out: Path) -> list[dict[str, Any]]:
    """Run the questions of `path` (JSON Lines with `question`) and write a Markdown table of the answers."""
    from assistant.chain import Query

    rows = []
    for q in read_jsonl(path):
        final = assistant.ask(Query(q["question"], backend="embedded"))
        rows.append({"question": q["question"], "answer": final.text, "fallback": final.fallback, "weak": final.weak,
                     "dropped": [d.text for d in final.dropped],
                     "citations": [(c.n, c.title, c.url) for c in final.citations]})
    lines = [
        SHOWCASE_HEADING + f" ({time.strftime('%Y-%m-%d')})",
        "",
        "Questions written for this page (none from the dev set), asked with the default settings "
        "(`gpuguide ask`, embedded backend, 2 CPU cores) over the ingested shared archive. *Shown* says whether "
        "the answer is the model's own verified text or the quoted evidence (with the reason). Sentences that "
        "verification removed are listed after the answer. Regenerate with "
        f"`.venv/bin/python bench/answer.py --showcase {path.relative_to(ROOT)} --docs {out.relative_to(ROOT)}`.",
        "",
        "| # | question | answer | shown | citations |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows, start=1):
        answer = r["answer"].replace("|", "\\|")
        if r["dropped"]:
            answer += "<br>*dropped:* " + " ".join(f"~~{d}~~" for d in r["dropped"]).replace("|", "\\|")
        shown = f"quoted evidence ({r['fallback']})" if r["fallback"] else "model, verified"
        if r["weak"]:
            shown += "; weak match"
        cites = "<br>".join(f"[{n}] [{title}]({url})" for n, title, url in r["citations"]).replace("|", "\\|")
        lines.append(f"| {i} | {r['question']} | {answer} | {shown} | {cites} |")
    section = "\n".join(lines) + "\n"
    page = out.read_text(encoding="utf-8") if out.exists() else ""
    at = page.find(SHOWCASE_HEADING)
    # the page's design notes stay; only its showcase section (the last one) is replaced
    atomic_write_text(out, (page[:at] if at >= 0 else page + ("\n" if page else "")) + section)
    return rows


SHOWCASE_HEADING = "## Ten answers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--sets", nargs="+", default=["dev", "synthetic"], choices=["dev", "synthetic"])
    parser.add_argument("--sample", type=int, default=20, help="synthetic questions, seeded sample of one fold")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fold", type=int, default=4, help="the synthetic fold to sample (tuning used the others)")
    parser.add_argument("--passages-only", action="store_true",
                        help="synthetic questions written from page text only (no catalog-card questions)")
    parser.add_argument("--no-llm", action="store_true", help="evidence selection and extractive latency only")
    parser.add_argument("--cli", type=int, default=0, help="also time N fresh `gpuguide ask` processes")
    parser.add_argument("--showcase", type=Path, help="JSON Lines of questions for the answers table")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs" / "answers.md")
    parser.add_argument("--rows", action="store_true", help="include every question's row in the JSON")
    args = parser.parse_args()

    from assistant.chain import Assistant, Query
    from index.search import load_searcher

    settings = real_corpus_settings(args.home)
    assistant = Assistant(settings, load_searcher(settings))
    report: dict[str, Any] = {"machine_start": machine(), "settings": settings.llm.model_dump(
        include={"threads", "max_tokens", "answer_sentences", "evidence_resources", "evidence_tokens",
                 "evidence_max_sentences", "evidence_lexical_weight", "evidence_rank_weight", "evidence_passage_weight",
                 "evidence_mmr_lambda",
                 "evidence_relevance_span", "verify_min_cosine", "verify_min_lexical", "redraft_tokens"})}
    sets = question_sets(args.sets, args.sample, args.seed, args.fold, args.passages_only)

    # Baseline in the same run: the extractive answer (no LLM), warm.
    concept = [q["question"] for qs in sets.values() for q in qs][:30]
    if concept:
        assistant.ask(Query(concept[0], backend="extractive"))
        samples = []
        for question in concept:
            started = time.perf_counter()
            assistant.ask(Query(question, backend="extractive"))
            samples.append(time.perf_counter() - started)
        report["extractive"] = percentiles(samples)

    if not args.no_llm:
        from assistant.llm import chat_model

        started = time.perf_counter()
        chat_model(settings.model_copy(update={"llm": settings.llm.model_copy(update={"backend": "embedded"})})).warm()
        report["embedded_model_load_s"] = round(time.perf_counter() - started, 2)

    for name, questions in sets.items():
        ev_rows = [evidence_row(assistant, q) for q in questions]
        rows = []
        for i, q in enumerate([] if args.no_llm else questions, start=1):
            rows.append(llm_row(assistant, q))
            print(f"{name} {i}/{len(questions)}: shown={rows[-1]['llm_shown']} gold={rows[-1]['gold_cited']} "
                  f"first={rows[-1]['first_token_s']}s total={rows[-1]['total_s']}s", file=sys.stderr, flush=True)
        report[name] = summarise(rows, ev_rows)
        if name == "dev":
            report[name]["label"] = "dev set (report only, never tuned on)"
        if args.rows:
            report[name]["rows"] = rows or ev_rows
    if args.cli:
        questions = [q["question"] for q in sets.get("synthetic", [])[: args.cli]]
        report["cli"] = cli_times(args.home, questions)
    if args.showcase:
        report["showcase"] = showcase(assistant, args.showcase.resolve(), args.docs.resolve())
    report["machine_end"] = machine()
    report["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
