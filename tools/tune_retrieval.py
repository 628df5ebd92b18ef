"""Choosing the ranking knobs by grouped cross-validation on the synthetic questions; prints one JSON object.

The synthetic set (bench/data/synthetic-questions.jsonl, written by tools/synth_questions.py) carries a fold
0-4 per question, grouped by resource. For each fold in turn, a coordinate search over the candidate values
picks the configuration with the best success@5 + MRR@10 on the other four folds, and that configuration is
scored on the held-out fold; the five held-out scores together are the honest estimate of the procedure. The
configuration the same search picks on all five folds becomes the settings defaults.

Also reported:
* `mechanisms`: each mechanism alone against the previous pipeline (no search, so nothing is fitted): the
  product's folding (core/text.py) and the whole Snowball stemmer vs the old light suffix stripper, typo correction, alias expansion in BM25 / in the dense query,
  passage fusion, and doc2query (synthetic questions of the other folds indexed beside their passage, BM25
  only, scored on the held-out fold: the held-out resources get no expansion, so this is pessimistic);
* `dev_set`: the dev questions through `run_eval` with the chosen defaults — a report, never a target;
* `chunking` (with `--chunk-variants 300:50:384,...`): the stored pages re-chunked with other
  target_words:overlap_words:max_wordpieces into a scratch data dir, indexed, and the same grouped
  cross-validation run there (gold is the resource URL, so any chunking can be scored).

    .venv/bin/python tools/tune_retrieval.py [--home DIR] [--questions FILE] [--out FILE] [--skip-dev]
                                             [--chunk-variants T:O:W,...] [--write-fitted]

Every configuration is ranked by the product's own `Searcher.search` (mode hybrid+rerank; "hybrid" for the
no-reranker rows), with the knobs set on its settings: there is no second implementation to keep in step.
Only the query embeddings and BM25 score arrays are remembered between configurations (no knob changes them).
`--write-fitted` writes the configuration chosen on all folds into core/data/fitted.json, which
core/settings.py reads as the `index.*` defaults.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import QUESTIONS, real_corpus_settings

log = logging.getLogger("tune")
SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
FOLDS = 5


@dataclass(frozen=True)
class Config:
    """One point of the search; field names match `index.*` settings."""

    bm25_weight: float = 1.5
    dense_weight: float = 1.0
    rrf_k: int = 60
    fusion_passages: int = 1
    fusion_decay: float = 0.0
    expansion_weight: float = 0.0
    dense_expansion: bool = False
    typo_correction: bool = True
    rerank_title: float = 0.3
    rerank_identifiers: float = 0.1
    rerank_named: float = 0.1
    tokenizer: str = "snowball"  # BM25 folding: snowball = the product's (core/text.py); others: FOLDS_BY_NAME
    doc2query: bool = False  # ablation only (see the module docstring)

    def settings(self) -> dict[str, Any]:
        """The `index.*` settings of this point (the product's tokenizer is core/text.py's, Snowball)."""
        out = asdict(self)
        out.pop("tokenizer")
        out.pop("doc2query")
        return out

    def report(self) -> dict[str, Any]:
        return {**self.settings(), "bm25_stemmer": self.tokenizer}


PREVIOUS = Config(tokenizer="light", typo_correction=False)  # the pipeline before this work (its glossary and host list are gone)
GRID: dict[str, list[Any]] = {
    "bm25_weight": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0],
    "rrf_k": [1, 2, 3, 5, 10, 20, 60],
    "fusion_passages": [1, 2, 3, 5],
    "fusion_decay": [0.0, 0.25, 0.5, 0.75],
    "expansion_weight": [0.0, 0.25, 0.5, 1.0],
    "dense_expansion": [False, True],
    "rerank_title": [0.0, 0.15, 0.3, 0.5, 0.8],
    "rerank_identifiers": [0.0, 0.1, 0.2, 0.4],
}
# Not searched, because the synthetic questions cannot show what they are for, only their false positives:
# * `rerank_named` (a catalog name — author, publisher — in the question): the generator drops every question
#   that names its resource's authors or most of its title (tools/synth_questions.py); it stays at 0.1;
# * `typo_correction`: the model writes no typos; it stays on;
# * the BM25 folding: it is how the index was built (core/text.py), not a setting; `mechanisms` and
#   `ablations_of_chosen` compare other foldings on a BM25 index built for them.
# `mechanisms` and `ablations_of_chosen` report what each costs or gains on these questions.


# The folding the product used before core/text.py (kept here only as the baseline it is compared with): a
# light suffix stripper (kernels → kernel, launches/launching → launch, quantized/quantization → quantiz).
_LIGHT_SUFFIXES = ("ations", "ation", "ings", "ions", "ing", "ion", "ers", "ies", "ied", "er", "ed", "es", "s", "e")


def light_fold(token: str) -> str:
    if len(token) < 4 or any(ch.isdigit() for ch in token):
        return token
    for suffix in _LIGHT_SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            if suffix == "s" and token.endswith(("ss", "us", "is", "as")):
                continue
            stem = token[: -len(suffix)]
            return stem + "y" if suffix in ("ies", "ied") else stem
    return token


@lru_cache(maxsize=1)
def _snowball() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def snowball_full(token: str) -> str:
    """The whole Snowball English stemmer, derivational suffixes included (kernels → kernel, performance → perform)."""
    if len(token) < 4 or any(ch.isdigit() for ch in token):
        return token
    return _snowball().stemWord(token)


def snowball_then_light(token: str) -> str:
    """The whole Snowball stemmer, then the light stripper on what is left."""
    return light_fold(snowball_full(token))


def snowball_inflected(token: str) -> str:
    """The whole Snowball stemmer on words ending in an inflection (-s, -ed, -ing) only; others as written."""
    return snowball_full(token) if token.endswith(("s", "ed", "ing")) else token


FOLDS_BY_NAME: dict[str, Any] = {"light": light_fold, "none": lambda t: t, "snowball+light": snowball_then_light,
                                 "snowball-inflected": snowball_inflected, "snowball-full": snowball_full}


def variant_tokenizer(name: str) -> Any:
    """The product tokenizer (`snowball`) or core/text.py's words folded another way."""
    from core.text import tokenize, words

    if name == "snowball":
        return tokenize
    fold = FOLDS_BY_NAME[name]
    return lambda text: [fold(w) for w in words(text)]


@dataclass
class Question:
    id: str
    text: str
    gold: set[str]
    fold: int
    source_chunk: str
    kind: str = ""


def load_synthetic(path: Path) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Question(d["id"], d["question"], {g.rstrip("/").lower() for g in d["gold"]}, int(d["fold"]),
                                d.get("source_chunk", ""), d.get("kind", "")))
    return out


class _MemoBM25:
    """A BM25 index whose per-query score arrays are remembered (read-only), so replaying a configuration
    through `Searcher.search` costs fusion and reranking, not scoring again; same interface as BM25Index."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self.tokenizer = index.tokenizer
        self._scores: dict[str, np.ndarray] = {}
        self._tokens: dict[tuple[str, ...], np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)

    def scores(self, query: str) -> np.ndarray:
        if query not in self._scores:
            self._scores[query] = self.index.scores(query)
            self._scores[query].setflags(write=False)
        return self._scores[query]

    def token_scores(self, tokens: list[str]) -> np.ndarray:
        key = tuple(tokens)
        if key not in self._tokens:
            self._tokens[key] = self.index.token_scores(tokens)
            self._tokens[key].setflags(write=False)
        return self._tokens[key]


class Replay:
    """Ranks every question through the product's own `Searcher.search` for a configuration: the knobs are
    set on the searcher's settings (and its field reranker rebuilt from them); only the query embeddings and
    BM25 score arrays, which no knob changes, are remembered between configurations. The BM25 folding and
    doc2query (ablations only: the index's own tokenizer is core/text.py's) swap in another BM25 index."""

    def __init__(self, searcher: Any, questions: list[Question]) -> None:
        self.s = searcher
        self.questions = questions
        self.urls = [r.url.rstrip("/").lower() for r in searcher.resources]
        self.texts = [c.indexed_text for c in searcher.store.chunks]
        self.row_of = {c.chunk_id: i for i, c in enumerate(searcher.store.chunks)}
        self.bm25: dict[Any, _MemoBM25] = {"snowball": _MemoBM25(searcher.bm25)}  # the index's own
        self._parsed: dict[tuple, dict[str, Any]] = {}  # Searcher's query-parse cache per (folding, typos)
        vectors: dict[str, np.ndarray] = {}
        embed = searcher.query_vector

        def query_vector(text: str) -> np.ndarray:
            if text not in vectors:
                vectors[text] = embed(text)
            return vectors[text]

        searcher.query_vector = query_vector
        self._memo: dict[tuple, dict[str, tuple[float, float]]] = {}
        self._configured: tuple | None = None

    def _bm25_for(self, tokenizer: str, doc2query_fold: int | None) -> _MemoBM25:
        from index.bm25 import BM25Index

        key = ("doc2query", doc2query_fold) if doc2query_fold is not None else tokenizer
        if key not in self.bm25:
            if doc2query_fold is not None:  # passages plus the other folds' synthetic questions beside their source
                extra: dict[int, list[str]] = defaultdict(list)
                for q in self.questions:
                    if q.fold != doc2query_fold and q.source_chunk in self.row_of:
                        extra[self.row_of[q.source_chunk]].append(q.text)
                texts = [t + ("\n" + "\n".join(extra[i]) if i in extra else "") for i, t in enumerate(self.texts)]
                self.bm25[key] = _MemoBM25(BM25Index.build(texts))
            else:
                self.bm25[key] = _MemoBM25(BM25Index.build(self.texts, variant_tokenizer(tokenizer)))
        return self.bm25[key]

    def configure(self, c: Config, fold: int | None = None) -> None:
        """Put `c` into the searcher: its settings, its reranker weights, the BM25 index it names."""
        for name, value in c.settings().items():
            setattr(self.s.settings.index, name, value)
        self.s.reranker.weights = _weights(c)  # the searcher's own FieldReranker (keeps its parsed queries)
        self.s.bm25 = self._bm25_for(c.tokenizer, fold if c.doc2query else None)
        key = (c.tokenizer, c.doc2query, fold if c.doc2query else None, c.typo_correction)
        self.s.use_query_parses(self._parsed.setdefault(key, {}))  # its expansion tokens depend on both

    def ranked_urls(self, q: Question, c: Config, rerank: bool = True, k: int = 10) -> list[str]:
        """Resource URLs, best first, from `Searcher.search` under configuration `c` (no filters)."""
        if self._configured != (c, q.fold if c.doc2query else None):
            self.configure(c, q.fold)
            self._configured = (c, q.fold if c.doc2query else None)
        hits = self.s.search(q.text, k=k, mode="hybrid+rerank" if rerank else "hybrid")
        return [h.resource.url.rstrip("/").lower() for h in hits]

    def per_question(self, c: Config, rerank: bool = True) -> dict[str, tuple[float, float]]:
        """{question id: (success@5, reciprocal rank within 10)}, memoised per configuration."""
        key = (c, rerank)
        if key not in self._memo:
            out = {}
            for q in sorted(self.questions, key=lambda q: q.fold):
                urls = self.ranked_urls(q, c, rerank)
                rank = next((i for i, u in enumerate(urls, 1) if u in q.gold), None)
                out[q.id] = (float(rank is not None and rank <= 5), 1.0 / rank if rank else 0.0)
            self._memo[key] = out
        return self._memo[key]

    def metrics(self, c: Config, ids: set[str] | None = None, rerank: bool = True) -> dict[str, float]:
        rows = [v for qid, v in self.per_question(c, rerank).items() if ids is None or qid in ids]
        if not rows:
            return {"n": 0, "success@5": 0.0, "mrr@10": 0.0}
        return {"n": len(rows), "success@5": round(float(np.mean([r[0] for r in rows])), 4),
                "mrr@10": round(float(np.mean([r[1] for r in rows])), 4)}


def objective(m: dict[str, float]) -> float:
    return m["success@5"] + m["mrr@10"]


def coordinate_search(replay: Replay, ids: set[str], start: Config, rounds: int = 2) -> Config:
    """Greedy: sweep one knob at a time over GRID keeping the best, `rounds` times over all knobs."""
    best = start
    best_score = objective(replay.metrics(best, ids))
    for _ in range(rounds):
        changed = False
        for name, values in GRID.items():
            for value in values:
                cand = replace(best, **{name: value})
                score = objective(replay.metrics(cand, ids))
                if score > best_score + 1e-9:
                    best, best_score, changed = cand, score, True
        if not changed:
            break
    return best


def cross_validate(replay: Replay, start: Config) -> dict[str, Any]:
    folds = sorted({q.fold for q in replay.questions})
    held: dict[str, tuple[float, float]] = {}
    per_fold = []
    for fold in folds:
        train = {q.id for q in replay.questions if q.fold != fold}
        test = {q.id for q in replay.questions if q.fold == fold}
        chosen = coordinate_search(replay, train, start)
        for qid, v in replay.per_question(chosen).items():
            if qid in test:
                held[qid] = v
        per_fold.append({"fold": fold, "chosen": chosen.report(), "train": replay.metrics(chosen, train),
                         "held_out": replay.metrics(chosen, test)})
        log.info("fold %d: held-out %s", fold, per_fold[-1]["held_out"])
    kinds = {q.id: q.kind for q in replay.questions}

    def summary(rows: list[tuple[float, float]]) -> dict[str, float]:
        return {"n": len(rows), "success@5": round(float(np.mean([r[0] for r in rows])), 4),
                "mrr@10": round(float(np.mean([r[1] for r in rows])), 4)}

    return {
        "held_out": summary(list(held.values())),
        "held_out_by_kind": {kind: summary([v for qid, v in held.items() if kinds[qid] == kind])
                             for kind in sorted(set(kinds.values()))},
        "folds": per_fold,
    }


def mechanisms(replay: Replay) -> dict[str, Any]:
    """Each mechanism alone on top of the previous pipeline, all synthetic questions (nothing fitted)."""
    variants = {
        "previous pipeline (light suffix stripper)": PREVIOUS,
        "no folding at all": replace(PREVIOUS, tokenizer="none"),
        "+ core/text.py folding (suffix list, Snowball-agreed)": replace(PREVIOUS, tokenizer="snowball"),
        "+ whole Snowball stemmer": replace(PREVIOUS, tokenizer="snowball-full"),
        "+ typo correction": replace(PREVIOUS, typo_correction=True),
        "+ alias expansion in BM25 (weight 0.5)": replace(PREVIOUS, expansion_weight=0.5),
        "+ alias expansion in the dense query": replace(PREVIOUS, dense_expansion=True),
        "+ passage fusion (3 passages, decay 0.5)": replace(PREVIOUS, fusion_passages=3, fusion_decay=0.5),
        "+ doc2query, other folds only (BM25)": replace(PREVIOUS, doc2query=True),
    }
    out = {}
    for name, cfg in variants.items():
        out[name] = {"hybrid+rerank": replay.metrics(cfg), "hybrid": replay.metrics(cfg, rerank=False)}
        log.info("%s: %s", name, out[name])
    return out


def ablations(replay: Replay, chosen: Config) -> dict[str, Any]:
    """The chosen configuration with one mechanism taken out at a time (all synthetic questions)."""
    variants = {
        "chosen": chosen,
        "core/text.py (inflections folded, Snowball-checked)": replace(chosen, tokenizer="snowball"),
        "whole Snowball stemmer": replace(chosen, tokenizer="snowball-full"),
        "light suffix stripper": replace(chosen, tokenizer="light"),
        "Snowball then the light stripper": replace(chosen, tokenizer="snowball+light"),
        "Snowball on inflected words only": replace(chosen, tokenizer="snowball-inflected"),
        "no folding": replace(chosen, tokenizer="none"),
        "no typo correction": replace(chosen, typo_correction=False),
        "no alias expansion": replace(chosen, expansion_weight=0.0, dense_expansion=False),
        "best passage only": replace(chosen, fusion_passages=1, fusion_decay=0.0),
        "no field reranker (hybrid)": chosen,
        "previous fusion weights (bm25 1.5, rrf_k 60)": replace(chosen, bm25_weight=1.5, rrf_k=60),
        "previous reranker weights (0.3 / 0.1 / 0.1)": replace(chosen, rerank_title=0.3, rerank_identifiers=0.1,
                                                                rerank_named=0.1),
        "no catalog-name boost (rerank_named 0)": replace(chosen, rerank_named=0.0),
    }
    return {name: replay.metrics(cfg, rerank=not name.startswith("no field reranker"))
            for name, cfg in variants.items()}


def _weights(cfg: Config) -> Any:
    from index.rerank import RerankWeights

    return RerankWeights(cfg.rerank_title, cfg.rerank_identifiers, cfg.rerank_named)


def dev_report(settings: Any, cfg: Config) -> dict[str, Any]:
    """The dev set through `run_eval` with `cfg` (planner answering "next" questions, as the CLI does)."""
    from assistant.services import eval_planner
    from index.evaluate import run_eval
    from index.search import load_searcher

    tuned = settings.model_copy(update={"index": settings.index.model_copy(update=cfg.settings())})
    searcher = load_searcher(tuned)
    report = run_eval(QUESTIONS, modes=["hybrid", "hybrid+rerank"], k=10, searcher=searcher,
                      planner=eval_planner(tuned))
    keep = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
    return {mode: {"all": {k: m[k] for k in keep}, "without_next": {k: m["without_next"][k] for k in keep}}
            for mode, m in report["metrics"].items()}


def chunk_variant_home(settings: Any, target: int, overlap: int, wordpieces: int, scratch: Path) -> Any:
    """A data dir whose index holds the same pages chunked with other sizes (embedding cache shared)."""
    from index.build import build_index
    from index.search import load_searcher
    from ingest.cards import card_chunk
    from ingest.chunk import chunk_document
    from core.settings import ChunkSettings, Settings
    from ingest.store import ChunkStore

    store = ChunkStore(settings.store_file)
    resources = {r.id: r for r in load_searcher(settings).resources}
    chunk_cfg = ChunkSettings(target_words=target, overlap_words=overlap, max_wordpieces=wordpieces)
    chunks = [c for d in store.documents() if d.resource_id in resources and d.source_kind != "card"
              for c in chunk_document(d, resources[d.resource_id], chunk_cfg)]
    chunks += [card_chunk(r) for r in resources.values()]
    home = scratch / f"chunks-{target}-{overlap}-{wordpieces}"
    variant = Settings(home=home, chunk=chunk_cfg.model_dump(),
                       embed={"cache_file": str(settings.embed.cache_file or settings.home / "embeddings.sqlite3")})
    build_index(chunks, list(resources.values()), variant)
    return variant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="data dir with the indexed archive")
    parser.add_argument("--questions", type=Path, default=SYNTHETIC)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    parser.add_argument("--skip-dev", action="store_true")
    parser.add_argument("--write-fitted", action="store_true",
                        help="write the configuration chosen on all folds into core/data/fitted.json (settings defaults)")
    parser.add_argument("--chunk-variants", default="", help="T:O:W,... target_words:overlap_words:max_wordpieces")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/gpuguide-tune"), help="scratch data dirs")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    started = time.perf_counter()
    settings = real_corpus_settings(args.home) if args.home else real_corpus_settings()
    from index.search import load_searcher

    questions = load_synthetic(args.questions)
    searcher = load_searcher(settings.model_copy(deep=True))
    replay = Replay(searcher, questions)
    result: dict[str, Any] = {
        "questions": str(args.questions.relative_to(ROOT) if args.questions.is_relative_to(ROOT) else args.questions),
        "n_questions": len(questions),
        "n_resources": len({q.source_chunk.split(":")[0] for q in questions}),
        "folds": {str(f): sum(q.fold == f for q in questions) for f in sorted({q.fold for q in questions})},
        "grid": GRID,
        "objective": "success@5 + MRR@10, hybrid+rerank, over the training folds",
    }
    result["mechanisms"] = mechanisms(replay)
    start = Config()
    result["cross_validation"] = cross_validate(replay, start)
    chosen = coordinate_search(replay, {q.id for q in questions}, start)
    result["chosen"] = chosen.report()
    result["chosen_on_all_folds"] = {"hybrid+rerank": replay.metrics(chosen), "hybrid": replay.metrics(chosen, rerank=False),
                                     "note": "fitted on these questions: optimistic; the honest number is "
                                             "cross_validation.held_out"}
    result["ablations_of_chosen"] = ablations(replay, chosen)
    result["previous_on_all_folds"] = {"hybrid+rerank": replay.metrics(PREVIOUS),
                                       "hybrid": replay.metrics(PREVIOUS, rerank=False)}
    if args.chunk_variants:
        result["chunking"] = {}
        current = searcher.store.chunks
        result["chunking"]["current"] = {"chunks": len(current), "held_out": result["cross_validation"]["held_out"]}
        for spec in args.chunk_variants.split(","):
            target, overlap, wordpieces = (int(x) for x in spec.split(":"))
            variant = chunk_variant_home(settings, target, overlap, wordpieces, args.scratch)
            other = load_searcher(variant)
            other_replay = Replay(other, questions)
            result["chunking"][spec] = {"chunks": len(other.store.chunks),
                                        "held_out": cross_validate(other_replay, start)["held_out"],
                                        "chosen_config_there": other_replay.metrics(chosen)}
            log.info("chunking %s: %s", spec, result["chunking"][spec])
    if not args.skip_dev:
        result["dev_set"] = {"note": "dev set: a report, not used for any choice", **dev_report(settings, chosen)}
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.write_fitted:
        from core.settings import write_fitted

        fitted = {name: chosen.settings()[name] for name in ("dense_weight", *GRID)}
        write_fitted("retrieval", fitted, "tools/tune_retrieval.py --write-fitted (grouped 5-fold CV on "
                     f"{result['questions']}, {len(questions)} questions, {result['n_resources']} resources)")
        result["wrote_fitted"] = fitted
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
