"""Evaluation harness: the product's search (or several modes side by side) over one question file.

Input: JSON Lines, one question per line: `id` and `question` are all it needs; optional `read` (URLs already
read, excluded from results), `kind` (lookup / concept / next / typo / outofscope / filter; "next" goes to the
reading planner when one is passed), `gold` and `accept` (URLs, used only for metrics). A question with a
non-empty `gold` is in scope; one with an empty `gold` or kind "outofscope" is out of scope; one with neither
is unlabelled: it gets results and outcomes (`outcomes_unlabelled`), no metrics.

Each result: id, mode, ranked (URLs), outcome (one of OUTCOMES: answer / weak / out_of_scope), abstained
(outcome is out_of_scope) and the scope model's probability.

Metrics, over in-scope questions (non-empty `gold`):

* Recall@k = |gold ∩ top k| / min(|gold|, k) — gold only, capped at k so Recall@1 is "the top hit is gold";
* MRR@10 = 1 / rank of the first gold URL in the top 10 (0 when none) — gold only;
* nDCG@10 with graded gains: gold 1.0, accept 0.5 (accept counts as relevant, but less), ideal DCG from the
  gold and accept sets;
* false_abstention_rate = share of in-scope questions refused (out_of_scope), weak_rate = share marked weak.
  Ranking metrics ignore the outcome (they score the ranked list a refusal would have shown).

Over out-of-scope questions (empty `gold`): abstention_accuracy = share refused. `confusion`: the three outcomes
× in scope / out of scope, counted. Every mode also gets `by_kind`, and `without_next`: the same metrics
without questions of kind "next" (those go to the reading planner when one is passed as `planner`; without
one they are searched like any other question).

Modes: bm25, dense, hybrid, hybrid+rerank (the product's, the default), and `langchain-faiss`: LangChain's
stock FAISS vector store with HuggingFaceEmbeddings (same packaged model) over the same chunks' plain text —
the baseline. It is built in memory only (LangChain's save/load uses pickle) and cannot abstain.
"""

from __future__ import annotations

import json
import logging
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from index.embed import EmbeddingCache
from index.records import MODES, OUTCOMES
from core.urls import url_key
from index.search import Searcher, load_searcher
from core.errors import UserError
from core.settings import Settings

log = logging.getLogger(__name__)

BASELINE = "langchain-faiss"
ALL_MODES = (*MODES, BASELINE)
PRODUCT_MODE = "hybrid+rerank"  # what `gpuguide search`, `ask` and the app use; eval's default
ACCEPT_GAIN = 0.5

# planner(question, read_urls, k) -> ranked resource URLs; used for questions of kind "next" when given.
Planner = Callable[[str, list[str], int], list[str]]


@dataclass
class Question:
    id: str
    question: str
    read: list[str] = field(default_factory=list)
    kind: str = ""
    gold: list[str] = field(default_factory=list)
    accept: list[str] = field(default_factory=list)
    labelled: bool = True  # False: the file says nothing about scope (no `gold`, kind not outofscope)

    @property
    def in_scope(self) -> bool:
        return self.labelled and bool(self.gold)

    @property
    def out_of_scope(self) -> bool:
        return self.labelled and not self.gold


def load_questions(path: Path | str) -> list[Question]:
    """Parse the JSON Lines file; a bad line is one UserError naming the file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"{path}: cannot read questions ({exc.strerror or exc})") from None
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            out.append(
                Question(
                    id=str(data["id"]), question=str(data["question"]), read=list(data.get("read") or []),
                    kind=str(data.get("kind") or ""), gold=list(data.get("gold") or []),
                    accept=list(data.get("accept") or []),
                    labelled="gold" in data or data.get("kind") == "outofscope",
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{number}: not a question record ({exc.__class__.__name__}: {exc})") from None
    if not out:
        raise UserError(f"{path}: no questions found")
    return out


# --- metrics (pure functions over URL lists) -----------------------------------------------------------


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold_set = {url_key(g) for g in gold}
    if not gold_set:
        return 0.0
    found = len(gold_set & {url_key(u) for u in ranked[:k]})
    return found / min(len(gold_set), k)


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    gold_set = {url_key(g) for g in gold}
    for rank, url in enumerate(ranked[:k], start=1):
        if url_key(url) in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], accept: Iterable[str], k: int = 10) -> float:
    gains = {url_key(a): ACCEPT_GAIN for a in accept}
    gains.update({url_key(g): 1.0 for g in gold})
    if not gains:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, url in enumerate(ranked[:k], start=1):
        key = url_key(url)
        if key in gains and key not in seen:
            dcg += gains[key] / math.log2(rank + 1)
            seen.add(key)
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def confusion_matrix(rows: list[tuple[Question, list[str], str]]) -> dict[str, dict[str, int]]:
    """Counts of each outcome for in-scope (non-empty gold) and out-of-scope questions (unlabelled ones left out)."""
    table = {side: {o: 0 for o in OUTCOMES} for side in ("in_scope", "out_of_scope")}
    for q, _, outcome in rows:
        if q.labelled:
            table["in_scope" if q.gold else "out_of_scope"][outcome] += 1
    return table


def metrics_for(rows: list[tuple[Question, list[str], str]]) -> dict[str, Any]:
    """Metrics of one mode over (question, ranked URLs, outcome) rows."""
    in_scope = [(q, r, o) for q, r, o in rows if q.in_scope]
    out_scope = [(q, r, o) for q, r, o in rows if q.out_of_scope]
    unlabelled = [o for q, _, o in rows if not q.labelled]
    return {
        "n_in_scope": len(in_scope),
        "n_out_of_scope": len(out_scope),
        "n_unlabelled": len(unlabelled),
        "recall@1": _mean([recall_at(r, q.gold, 1) for q, r, _ in in_scope]),
        "recall@5": _mean([recall_at(r, q.gold, 5) for q, r, _ in in_scope]),
        "recall@10": _mean([recall_at(r, q.gold, 10) for q, r, _ in in_scope]),
        "mrr@10": _mean([mrr_at(r, q.gold, 10) for q, r, _ in in_scope]),
        "ndcg@10": _mean([ndcg_at(r, q.gold, q.accept, 10) for q, r, _ in in_scope]),
        "abstention_accuracy": _mean([float(o == "out_of_scope") for _, _, o in out_scope]),
        "false_abstention_rate": _mean([float(o == "out_of_scope") for _, _, o in in_scope]),
        "weak_rate": _mean([float(o == "weak") for _, _, o in in_scope]),
        "confusion": confusion_matrix(rows),
        "outcomes_unlabelled": {o: unlabelled.count(o) for o in OUTCOMES},
    }


# --- the baseline ----------------------------------------------------------------------------------------


class LangChainBaseline:
    """LangChain's stock FAISS store + HuggingFaceEmbeddings over plain chunk text, in memory only.

    Its document vectors are what HuggingFaceEmbeddings computes (unnormalised, L2 distance, stock defaults);
    they are cached under a separate key so repeated evaluations skip the re-encoding.
    """

    def __init__(self, searcher: Searcher) -> None:
        with warnings.catch_warnings():  # langchain-community announces its sunset on import
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_community.vectorstores import FAISS
        from langchain_huggingface import HuggingFaceEmbeddings

        embedder = searcher.embedder
        self.embeddings = HuggingFaceEmbeddings(
            model_name=str(embedder.path), model_kwargs={"device": "cpu", "local_files_only": True}
        )
        chunks = searcher.store.chunks
        texts = [c.text for c in chunks]
        vectors = _cached_stock_vectors(embedder.cache, f"langchain-stock:{embedder.model_id}", texts, self.embeddings)
        self.store = FAISS.from_embeddings(
            list(zip(texts, vectors, strict=True)), self.embeddings, metadatas=[{"url": c.url} for c in chunks]
        )
        self.n_chunks = len(chunks)

    def ranked(self, question: str, k: int, exclude: set[str]) -> list[str]:
        docs = self.store.similarity_search_with_score(question, k=self.n_chunks)
        out: list[str] = []
        for doc, _ in docs:
            url = doc.metadata["url"]
            if url not in out and url_key(url) not in exclude:
                out.append(url)
            if len(out) >= k:
                break
        return out


def _cached_stock_vectors(cache: EmbeddingCache, model_key: str, texts: list[str], embeddings: Any) -> list[list[float]]:
    keys = [EmbeddingCache.key(model_key, t) for t in texts]
    found = cache.get_many(keys)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        fresh = embeddings.embed_documents([text_of[k] for k in missing])
        new = {k: np.asarray(v, dtype=np.float32) for k, v in zip(missing, fresh, strict=True)}
        cache.put_many(new)
        found.update(new)
    return [found[k].tolist() for k in keys]


# --- the run -----------------------------------------------------------------------------------------------


def run_eval(
    questions_path: Path | str,
    modes: Sequence[str] = (PRODUCT_MODE,),
    k: int = 10,
    settings: Settings | None = None,
    searcher: Searcher | None = None,
    planner: Planner | None = None,
) -> dict[str, Any]:
    """Run each mode over the questions; returns {"results": [...], "metrics": {mode: {...}}}."""
    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown:
        raise UserError(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(ALL_MODES)} (or all)")
    questions = load_questions(questions_path)
    if searcher is None:
        if settings is None:
            raise ValueError("run_eval needs settings or a searcher")
        searcher = load_searcher(settings)
    baseline = LangChainBaseline(searcher) if BASELINE in modes else None
    results: list[dict[str, Any]] = []
    per_mode: dict[str, list[tuple[Question, list[str], str]]] = {m: [] for m in modes}
    timings: dict[str, list[float]] = {m: [] for m in modes}
    for q in questions:
        exclude = {url_key(u) for u in q.read}
        for mode in modes:
            started = time.perf_counter()
            probability: float | None = None
            if planner is not None and q.kind == "next":
                ranked, outcome = list(planner(q.question, q.read, k)), "answer"
            elif mode == BASELINE:
                assert baseline is not None
                ranked, outcome = baseline.ranked(q.question, k, exclude), "answer"
            else:
                hits = searcher.search(q.question, k=k, mode=mode, exclude_read=set(q.read) or None)
                ranked, outcome = [h.url for h in hits], searcher.outcome(q.question, hits)
                probability = round(searcher.scope_probability(q.question, hits), 4) if hits else 0.0
            timings[mode].append(time.perf_counter() - started)
            results.append({
                "id": q.id, "mode": mode, "ranked": ranked, "outcome": outcome,
                "abstained": outcome == "out_of_scope", "scope_probability": probability,
            })
            per_mode[mode].append((q, ranked, outcome))
    metrics: dict[str, Any] = {}
    for mode, rows in per_mode.items():
        metrics[mode] = metrics_for(rows)
        kinds = sorted({q.kind for q, _, _ in rows if q.kind})
        metrics[mode]["by_kind"] = {kind: metrics_for([r for r in rows if r[0].kind == kind]) for kind in kinds}
        metrics[mode]["without_next"] = metrics_for([r for r in rows if r[0].kind != "next"])
        metrics[mode]["mean_latency_ms"] = round(1000 * float(np.mean(timings[mode])), 2) if timings[mode] else None
    return {"results": results, "metrics": metrics}
