"""Answer quality, the product against the naive plain-prompt pipeline, in one run over the same loaded GGUF
and the same retrieval. Prints one JSON object (`--out FILE` writes it too).

    .venv/bin/python bench/answer_quality.py [--home DIR] [--set bench/data/answer-eval.jsonl]
        [--sample N --seed S] [--pipelines product,naive] [--out docs/measurements/answer_quality.json]
    .venv/bin/python bench/answer_quality.py --check-evidence   # every evidence string in its page's text?

Pipelines, per question of the set (open learner questions written from the page text, each with 2-4 key
points and the page sentence that supports each; bench/data/answer-eval.md says how it was written):
* `product`: `Guide.stream(Query(question, backend="embedded"))`, the app's own answer path (one routing
  decision, then the planner or the answer chain);
* `naive`: what a user would put together from the same parts: the project's `searcher.search(question, k=4)`,
  each hit's first two passages cut to 160 words, one plain chat prompt (`NAIVE_INSTRUCTION`, the numbered
  sources, the question), no grammar, greedy, through the same llama.cpp model object.

Scores per answer (rules fixed before any result was seen, never tuned on this set; two scorer fixes noted below):
* `covered`: a key point is covered when some answer sentence has cosine >= `COVER_COSINE` to it with the
  packaged embedder, or contains >= `COVER_LEXICAL` of its content stems (core.text.terms);
* `unsupported`: numbers, versions and names in an answer sentence (tokens with a digit, CamelCase,
  ALL-CAPS acronyms, capitalised words not at the sentence start) absent from the sources the sentence cites
  (each source's title, its place in the guide and its passage text; a plural "s" or a possessive "'s" may
  be dropped: both fixes came after the first runs, which counted "GPU's" and a pointer answer's "Tier 1" as
  unsupported, in both pipelines). A sentence with no [n] marker is
  checked against all the sources given and counted in `uncited`; a marker naming no given source cites
  nothing (`bad_markers`);
* `cited_share`: sentences with a marker, over all sentences; `gold_cited`: a marker points at the page the
  answer is in; `gold_given`: that page is among the sources;
* `first_text_s` (the sources and their passages on screen; the naive pipeline shows nothing before its
  first token), `first_token_s` (first streamed answer text) and `total_s` (retrieval, prompt, generation,
  verification); `evidence_tokens` (the passages the model read, estimated as the product budgets them).
Aggregates per pipeline: mean key-point coverage, share of questions with every key point, share with >= 1
unsupported item, p50/p95 times. Every answer's text is kept in `rows` so a person can grade by reading.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import DEFAULT_HOME, ROOT, peak_rss_mb, real_corpus_settings, write_report
from assistant.chain import KEY_PASSAGE_LEAD
from assistant.evidence import estimate_tokens
from core.records import place_label
from core.files import atomic_write_text

EVAL_SET = ROOT / "bench" / "data" / "answer-eval.jsonl"
PIPELINES = ("product", "naive")

COVER_COSINE = 0.70  # MiniLM: same-fact paraphrases sit above, merely on-topic sentences (0.4-0.6) below
COVER_LEXICAL = 0.60  # share of a key point's content stems one answer sentence must contain

NAIVE_K = 4
NAIVE_PASSAGES = 2
NAIVE_WORDS = 160  # per hit
NAIVE_MAX_TOKENS = 200  # room for four sentences; the product's own cap is settings.llm.max_tokens
NAIVE_INSTRUCTION = "Answer the question in 2-4 sentences using only the sources below. Cite sources as [n]."


# --- the scorer's pure parts ---------------------------------------------------------------------------

@dataclass
class Sentence:
    """One answer sentence, its text without markers and the source numbers it cites."""

    text: str
    cited: list[int] = field(default_factory=list)


_MARKER = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\s*\]")
_MARKERS_AFTER_END = re.compile(r"([.!?])((?:\s*\[\s*\d{1,3}(?:\s*[,;]\s*\d{1,3})*\s*\])+)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`*])")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|approx|No)\.$")


def markers(text: str) -> list[int]:
    """Source numbers in `text`, in order of first mention: "[1]", "[2][3]", "[1, 4]"."""
    found: list[int] = []
    for m in _MARKER.finditer(text):
        for n in re.split(r"\s*[,;]\s*", m.group(1)):
            if int(n) not in found:
                found.append(int(n))
    return found


def split_answer(text: str) -> list[Sentence]:
    """The answer's sentences with their citations. A marker after the full stop ("... cache. [1]") belongs to
    the sentence before it; markers are removed from the sentence text."""
    text = re.sub(r"\s+", " ", text).strip()
    text = _MARKERS_AFTER_END.sub(lambda m: f"{m.group(2)}{m.group(1)}", text)
    parts: list[str] = []
    for part in _SENTENCE_END.split(text):
        if parts and _ABBREV.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    out: list[Sentence] = []
    for part in parts:
        plain = re.sub(r"\s+([.,;:!?])", r"\1", _MARKER.sub("", part)).strip()
        if plain.strip(" .!?"):
            out.append(Sentence(plain, markers(part)))
    return out


_EDGE = "\"'`*()[]{}<>,;:!?“”‘’"


def salient_items(sentence: str) -> list[str]:
    """Numbers, versions and names: tokens with a digit, CamelCase or ALL-CAPS tokens, and capitalised words
    after the first. These are what a model invents most easily and what a reader takes as fact."""
    items: list[str] = []
    for i, raw in enumerate(_MARKER.sub(" ", sentence).split()):
        token = raw.strip(_EDGE).rstrip(".")
        token = token.strip(_EDGE)
        letters = [c for c in token if c.isalpha()]
        if not token or (len(token) < 2 and not token.isdigit()):
            continue
        has_digit = any(c.isdigit() for c in token)
        camel = bool(re.search(r"[a-z][A-Z]", token))
        acronym = len(letters) >= 2 and all(c.isupper() for c in letters)
        capital = i > 0 and token[0].isupper()
        if has_digit or camel or acronym or capital:
            items.append(token)
    return list(dict.fromkeys(items))


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\\", "").replace("×", "x").replace("’", "'")).lower()


def item_in(item: str, text: str) -> bool:
    """Is the item written in `text` as a whole token (case-insensitive; "GPUs" matches "GPU")?"""
    norm = _normal(text)
    item = re.sub(r"['’]s$", "", item)  # "GPU's" is written as "GPU"
    for form in {item, item[:-1] if item.endswith("s") and len(item) > 2 else item}:
        if re.search(rf"(?<![0-9a-z]){re.escape(_normal(form))}(?![0-9a-z])", norm):
            return True
    return False


def unsupported_items(sentence: Sentence, sources: dict[int, str]) -> list[str]:
    """The sentence's salient items found in none of the sources it cites (all sources when it cites none)."""
    cited = sentence.cited or list(sources)
    text = "\n".join(sources[n] for n in cited if n in sources)
    return [item for item in salient_items(sentence.text) if not item_in(item, text)]


def lexical_share(point: str, sentence: str) -> float:
    """The share of the key point's content stems that the sentence contains."""
    from core.text import terms

    wanted = terms(point)
    return len(wanted & terms(sentence)) / len(wanted) if wanted else 0.0


def covered_points(points: list[str], sentences: list[str], embed: Callable[[list[str]], Any] | None) -> list[bool]:
    """Per key point: does some sentence say it (cosine >= COVER_COSINE, or >= COVER_LEXICAL of its stems)?
    `embed` maps texts to normalised vectors (the packaged embedder); None checks the stems alone."""
    if not sentences:
        return [False] * len(points)
    sims = None
    if embed is not None:
        vecs = embed(points + sentences)
        sims = vecs[: len(points)] @ vecs[len(points):].T
    out = []
    for i, point in enumerate(points):
        lexical = any(lexical_share(point, s) >= COVER_LEXICAL for s in sentences)
        semantic = sims is not None and float(sims[i].max()) >= COVER_COSINE
        out.append(lexical or semantic)
    return out


def score_answer(text: str, sources: dict[int, str], gold: set[int], points: list[str],
                 embed: Callable[[list[str]], Any] | None) -> dict[str, Any]:
    """Everything measured about one answer; `sources` maps [n] to its title and passage text, `gold` holds
    the numbers of the sources that are the question's page."""
    sentences = split_answer(text)
    unsupported = {s.text: unsupported_items(s, sources) for s in sentences}
    cited = [n for s in sentences for n in s.cited]
    covered = covered_points(points, [s.text for s in sentences], embed)
    return {
        "sentences": len(sentences),
        "covered": covered,
        "coverage": round(sum(covered) / len(covered), 3) if covered else None,
        "unsupported": sum(len(v) for v in unsupported.values()),
        "unsupported_items": sorted({i for v in unsupported.values() for i in v}),
        "uncited": sum(not s.cited for s in sentences),
        "bad_markers": sorted({n for n in cited if n not in sources}),
        "cited_share": round(sum(bool(s.cited) for s in sentences) / len(sentences), 3) if sentences else 0.0,
        "gold_cited": bool(gold & set(cited)),
        "gold_given": bool(gold),
    }


def evidence_problems(rows: list[dict[str, Any]], pages: dict[str, str]) -> list[str]:
    """Key points whose evidence is not in the extracted text of the question's page (`pages`: resource id
    to page text); whitespace and markdown escapes do not count."""
    problems = []
    for row in rows:
        text = _normal(pages.get(row["resource_id"], ""))
        problems += [f"{row['id']}: {kp['evidence'][:60]}" for kp in row["key_points"] if _normal(kp["evidence"]) not in text]
    return problems


# --- the two pipelines --------------------------------------------------------------------------------

def is_gold(resource_id: str, url: str, q: dict[str, Any]) -> bool:
    return resource_id == q["resource_id"] or url.strip().rstrip("/").lower() == q["gold"].strip().rstrip("/").lower()


WITHOUT_KEY = "product_without_key_passage"
WITHOUT_REDRAFT = "product_without_redraft"



def answer_sources(answer: Any, q: dict[str, Any]) -> tuple[dict[int, str], set[int]]:
    """An answer's sources as the scorer reads them (title, place, passage by number) and the gold numbers."""
    return ({c.n: f"{c.title}\n{c.place}\n{c.passage}" for c in answer.citations},
            {c.n for c in answer.citations if is_gold(c.resource_id, c.url, q)})


def product_answer(guide: Any, q: dict[str, Any]) -> dict[str, Any]:
    """The app's answer, streamed so the first token is timed; its sources are its citations."""
    from assistant.chain import Query

    started = time.perf_counter()
    first = shown = None
    final = standing = None
    for event in guide.stream(Query(q["question"], backend="embedded")):
        if event.kind == "sources" and event.answer is not None and shown is None:
            shown = time.perf_counter() - started  # the sources and their passages are on screen
        if event.kind == "token" and event.token and first is None:
            first = time.perf_counter() - started
        elif event.kind == "redraft":
            standing = event.answer  # the answer without the second draft: its A/B in the same run
        elif event.kind == "final":
            final = event.answer
    total = time.perf_counter() - started
    assert final is not None
    sources, gold = answer_sources(final, q)
    return {
        "answer": final.text,
        "draft": final.draft,  # the model's raw text: verification changes can be replayed on it
        "redraft": final.redraft,  # the second draft's, when the first held nothing (llm.redraft_tokens)
        "route": final.route,
        "fallback": final.fallback,
        "dropped": [d.text for d in final.dropped],
        "dropped_reasons": [d.reason for d in final.dropped],
        "sources": [{"n": c.n, "resource_id": c.resource_id, "url": c.url, "title": c.title} for c in final.citations],
        "_sources": sources,
        "_gold": gold,
        "first_text_s": round(shown, 2) if shown is not None else None,
        "first_token_s": round(first, 2) if first is not None else None,
        "total_s": round(total, 2),
        "evidence_tokens": sum(estimate_tokens(c.passage) for c in final.citations),
        "_standing": standing,
    }


def naive_sources(searcher: Any, question: str) -> list[tuple[Any, str]]:
    """The project's search, top NAIVE_K hits, each hit's first passages cut to NAIVE_WORDS words."""
    out = []
    for hit in searcher.search(question, k=NAIVE_K):
        words = " ".join(chunk.text for chunk, _ in hit.passages[:NAIVE_PASSAGES]).split()
        out.append((hit.resource, " ".join(words[:NAIVE_WORDS])))
    return out


def naive_prompt(question: str, sources: list[tuple[Any, str]]) -> str:
    numbered = "\n\n".join(f"[{n}] {res.title}\n{text}" for n, (res, text) in enumerate(sources, start=1))
    return f"{NAIVE_INSTRUCTION}\n\nSources:\n\n{numbered}\n\nQuestion: {question}"


def plain_chat(model: Any, prompt: str, max_tokens: int) -> Iterator[str]:
    """One user message through the model's own chat template, greedy, no grammar, no fixed prefix.

    EmbeddedLLM has no public call for plain messages, so this drives its llama.cpp object (`model.llm`)
    under the model's own lock and niceness, as its `stream` does; the product's next call finds its
    prefix gone from the context and loads it again from the prompt cache. (In-process model only: a
    model in a process of its own, the GPU build's default, has no `llm` here.)"""
    from assistant.llm import background_priority

    with model.lock, background_priority(model.cfg.generation_nice):
        stream = model.llm.create_chat_completion(
            messages=[{"role": "user", "content": prompt}], stream=True, max_tokens=max_tokens,
            temperature=0.0, top_k=1, repeat_penalty=1.0, seed=0,
        )
        for chunk in stream:
            piece = chunk["choices"][0]["delta"].get("content")
            if piece:
                yield piece


def naive_answer(guide: Any, model: Any, q: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    sources = naive_sources(guide.searcher(), q["question"])
    first = None
    pieces = []
    for piece in plain_chat(model, naive_prompt(q["question"], sources), NAIVE_MAX_TOKENS):
        if first is None:
            first = time.perf_counter() - started
        pieces.append(piece)
    total = time.perf_counter() - started
    numbered = {n: (res, text) for n, (res, text) in enumerate(sources, start=1)}
    return {
        "answer": "".join(pieces).strip(),
        "sources": [{"n": n, "resource_id": res.id, "url": res.url, "title": res.title} for n, (res, _) in numbered.items()],
        "_sources": {n: f"{res.title}\n{place_label(res.topic, res.section, res.tier)}\n{text}"
                     for n, (res, text) in numbered.items()},
        "_gold": {n for n, (res, _) in numbered.items() if is_gold(res.id, res.url, q)},
        "first_text_s": round(first, 2) if first is not None else None,
        "first_token_s": round(first, 2) if first is not None else None,
        "total_s": round(total, 2),
        "evidence_tokens": sum(estimate_tokens(text) for _, text in sources),
    }


# --- the run -------------------------------------------------------------------------------------------

def read_set(path: Path, sample: int, seed: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return random.Random(seed).sample(rows, sample) if 0 < sample < len(rows) else rows


def p50_p95(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2),
            "p95": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2)}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    return {
        "n": n,
        "key_point_coverage": round(statistics.mean(r["coverage"] for r in rows), 3),
        "all_key_points": round(sum(all(r["covered"]) for r in rows) / n, 3),
        "all_key_points_count": f"{sum(all(r['covered']) for r in rows)}/{n}",
        "with_unsupported": round(sum(r["unsupported"] > 0 for r in rows) / n, 3),
        "with_unsupported_count": f"{sum(r['unsupported'] > 0 for r in rows)}/{n}",
        "unsupported_mean": round(statistics.mean(r["unsupported"] for r in rows), 2),
        "cited_share": round(statistics.mean(r["cited_share"] for r in rows), 3),
        "answers_with_a_citation": f"{sum(r['cited_share'] > 0 for r in rows)}/{n}",
        "gold_cited": round(sum(r["gold_cited"] for r in rows) / n, 3),
        "gold_given": round(sum(r["gold_given"] for r in rows) / n, 3),
        "sentences_mean": round(statistics.mean(r["sentences"] for r in rows), 2),
        "first_text_s": p50_p95([r["first_text_s"] for r in rows if r["first_text_s"] is not None]),
        "first_token_s": p50_p95([r["first_token_s"] for r in rows if r["first_token_s"] is not None]),
        "evidence_tokens_mean": round(statistics.mean(r["evidence_tokens"] for r in rows), 1) if rows else None,
        "total_s": p50_p95([r["total_s"] for r in rows]),
    }


def machine() -> dict[str, Any]:
    return {"cores": len(os.sched_getaffinity(0)), "load_average_1m": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--set", type=Path, default=EVAL_SET)
    parser.add_argument("--sample", type=int, default=0, help="a seeded sample of N questions (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pipelines", default=",".join(PIPELINES))
    parser.add_argument("--out", help="also write the JSON report here")
    parser.add_argument("--evidence-tokens", type=int, default=0,
                        help="pin the product's evidence budget (quality independent of the machine's load); "
                             "0: the budget follows the measured speeds, as in the app")
    parser.add_argument("--check-evidence", action="store_true", help="check the set's evidence against the page text, no LLM")
    args = parser.parse_args()
    pipelines = [p for p in args.pipelines.split(",") if p]
    if unknown := set(pipelines) - set(PIPELINES):
        parser.error(f"unknown pipelines {sorted(unknown)}; choose from {', '.join(PIPELINES)}")

    from assistant.guide import Guide
    from assistant.llm import chat_model

    settings = real_corpus_settings(args.home)
    if args.check_evidence:
        from ingest.store import ChunkStore

        pages: dict[str, str] = {}
        for doc in ChunkStore(settings.store_file).documents():
            if doc.source_kind != "card":
                pages[doc.resource_id] = pages.get(doc.resource_id, "") + "\n" + doc.text
        rows = read_set(args.set, 0, 0)
        write_report({"questions": len(rows), "key_points": sum(len(r["key_points"]) for r in rows),
                      "evidence_missing": evidence_problems(rows, pages)}, None)
        return
    llm_update: dict[str, Any] = {"backend": "embedded"}
    if args.evidence_tokens:
        llm_update |= {"evidence_tokens_min": args.evidence_tokens, "evidence_tokens_max": args.evidence_tokens,
                       "evidence_tokens": args.evidence_tokens}
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update=llm_update)})
    guide = Guide(settings)
    embedder = guide.searcher().embedder
    report: dict[str, Any] = {"machine_start": machine(), "set": str(args.set.relative_to(ROOT)) if args.set.is_relative_to(ROOT) else str(args.set)}
    started = time.perf_counter()
    model = chat_model(settings)
    model.warm()
    report["embedded_model_load_s"] = round(time.perf_counter() - started, 2)
    report["rules"] = {"cover_cosine": COVER_COSINE, "cover_lexical": COVER_LEXICAL, "naive_k": NAIVE_K,
                       "naive_passages": NAIVE_PASSAGES, "naive_words": NAIVE_WORDS,
                       "naive_max_tokens": NAIVE_MAX_TOKENS, "product_max_tokens": settings.llm.max_tokens,
                       "llm_threads": getattr(getattr(model, "llm", None), "n_threads", settings.llm.threads),
                       "evidence_tokens_pinned": args.evidence_tokens or None}

    questions = read_set(args.set, args.sample, args.seed)
    rows: dict[str, list[dict[str, Any]]] = {p: [] for p in pipelines}
    for i, q in enumerate(questions, start=1):
        points = [kp["point"] for kp in q["key_points"]]
        for name in pipelines:
            got = product_answer(guide, q) if name == "product" else naive_answer(guide, model, q)
            sources, gold, standing = got.pop("_sources"), got.pop("_gold"), got.pop("_standing", None)
            scored = score_answer(got["answer"], sources, gold, points, embedder.encode_uncached)
            rows[name].append({"id": q["id"], "question": q["question"], **got, **scored})
            if name == "product":  # the same answers without the quoted key passage: the feature's A/B in one run
                bare = got["answer"].split(KEY_PASSAGE_LEAD)[0].strip()
                rows.setdefault(WITHOUT_KEY, []).append({
                    "id": q["id"], "question": q["question"], **got, "answer": bare,
                    "key_passage": bare != got["answer"],
                    **score_answer(bare, sources, gold, points, embedder.encode_uncached)})
            if name == "product":  # without the second draft: the answer that stood before it, same evidence
                alone = {k: v for k, v in rows[name][-1].items() if k not in ("id", "question")}
                if standing is not None:
                    alone |= {"answer": standing.text, "fallback": standing.fallback, **score_answer(
                        standing.text, *answer_sources(standing, q), points, embedder.encode_uncached)}
                rows.setdefault(WITHOUT_REDRAFT, []).append({"id": q["id"], "question": q["question"], **alone})
            r = rows[name][-1]
            print(f"{i}/{len(questions)} {name}: coverage={r['coverage']} unsupported={r['unsupported']} "
                  f"cited={r['cited_share']} first={r['first_token_s']}s total={r['total_s']}s",
                  file=sys.stderr, flush=True)
        if args.out and i < len(questions):  # a run stopped early still leaves the questions it finished
            atomic_write_text(Path(args.out), json.dumps(finish(report, rows, len(questions)), indent=2) + "\n")
    write_report(finish(report, rows, len(questions)), args.out)


def finish(report: dict[str, Any], rows: dict[str, list[dict[str, Any]]], planned: int) -> dict[str, Any]:
    """The report with each pipeline's aggregates and every answer's row, as far as the run got."""
    done = {**report, **{name: summarise(r) for name, r in rows.items()}}
    done |= {"questions_planned": planned, "machine_end": machine(), "peak_rss_mb": peak_rss_mb(), "rows": rows}
    return done


if __name__ == "__main__":
    sys.exit(main())
