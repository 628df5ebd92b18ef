"""Reading-planner benchmark: routing, precision of the first 3 picks, and picks the question said were read.

Questions go through the same path as `gpuguide ask --llm none --json` (Assistant.ask, extractive backend)
with an empty profile, so the planner knows only what the sentence says. Our own questions
(bench/data/next-questions.jsonl: kind `next` with the read list and focus they state, kind `search` for
everything else; split `calibration` fits the routing weights and guided the work; `check`, `fresh` and
`fresh2` were each written after the fixes prompted by the one before, to see how far they carry: their
first-run numbers are the honest ones) are reported apart from the dev set's, labelled `dev set`, never
tuned on.

Gold for a `next` question is what the planner's rules give for its true read list and focus
(`--regold` recomputes it): the first 3 picks, plus the other unread items of the same topic and tier.

    python bench/next_reads.py [--home DIR] [--dev ../shared/eval/dev-questions.jsonl]
    python bench/next_reads.py --calibrate     # fit the routing weights on our questions (5-fold check)
    python bench/next_reads.py --learners      # the generated learner messages (tools/synth_learners.py)

`--learners` runs bench/data/learner-messages-rewrites.jsonl (`--learners-file` for others, pooled) through the
planner front the app uses (NextReads with the packaged embedder: routing, understanding, plan), empty
profile, and reports the tune seeds (`--tune-seeds`, default 10-12) apart from the others (unseen): routed,
precision of the first 3 picks (a pick is good when it is in the expected picks or an unread item of a gold
pick's topic and tier; "anything else about X" counts against min(3, items about X)),
picks the learner said they read, and the time of one "what next" answer (route + plan).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assistant.planner import plan_next
from assistant.route import FEATURES, fit_logistic
from core.records import Resource

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "data" / "next-questions.jsonl"
LEARNERS = HERE / "data" / "learner-messages-rewrites.jsonl"  # tools/learner_rewrites.py (older: learner-messages.jsonl)
TUNE_SEEDS = (10, 11, 12)
DEV = HERE.parent.parent / "shared" / "eval" / "dev-questions.jsonl"


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def oracle_gold(resources: list[Resource], read_urls: list[str], focus: list[str]) -> tuple[list[str], list[str]]:
    """What the planner's rules give for the true history and focus: the first 3 picks (gold) and the
    other unread items of the same topic × tier (accepted: order within a tier is the list's, not a rule)."""
    by_url = {r.url: r for r in resources}
    read = {by_url[u].id for u in read_urls if u in by_url}
    plan = plan_next(resources, read, k=3, interest_scores={t: 1.0 for t in focus})
    gold = [p.resource.url for p in plan.picks]
    groups = {(p.resource.topic, p.resource.tier) for p in plan.picks}
    accept = [r.url for r in sorted(resources, key=lambda r: r.position)
              if (r.topic, r.tier) in groups and r.id not in read and r.url not in gold]
    return gold, accept


def norm(url: str) -> str:
    return url.lower().split("://", 1)[-1].removeprefix("www.").rstrip("/")


def run(assistant: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from assistant.chain import Query

    routed = correct = 0
    precisions: list[float] = []
    violations = 0
    misses: list[dict[str, Any]] = []
    seconds: list[float] = []
    for row in rows:
        t0 = time.perf_counter()
        answer = assistant.ask(Query(row["question"], backend="extractive"))
        seconds.append(time.perf_counter() - t0)
        is_next = row["kind"] == "next"
        correct += (answer.route == "next") == is_next
        if not is_next:
            if answer.route == "next":
                misses.append({"id": row["id"], "question": row["question"], "routed": "next"})
            continue
        routed += answer.route == "next"
        picks = [norm(c.url) for c in answer.citations][:3] if answer.route == "next" else []
        good = {norm(u) for u in row.get("gold", []) + row.get("accept", [])}
        read = {norm(u) for u in row.get("read", [])}
        hits = sum(1 for p in picks if p in good)
        precisions.append(hits / 3)
        bad = [p for p in picks if p in read]
        violations += len(bad)
        if hits < 3 or bad or answer.route != "next":
            misses.append({"id": row["id"], "question": row["question"], "routed": answer.route,
                           "picks": picks, "read_picks": bad, "hits": hits,
                           "understood": answer.read_ids, "focus": answer.focus_topics})
    n_next = sum(1 for r in rows if r["kind"] == "next")
    seconds.sort()
    return {
        "questions": len(rows), "next_questions": n_next,
        "routing_accuracy": round(correct / len(rows), 3) if rows else None,
        "next_routed_to_planner": f"{routed}/{n_next}",
        "search_routed_to_search": f"{sum(1 for r in rows if r['kind'] != 'next') - sum(1 for m in misses if m['routed'] == 'next' and 'picks' not in m)}/{len(rows) - n_next}",
        "precision_at_3": round(sum(precisions) / len(precisions), 3) if precisions else None,
        "read_violations": violations,
        "p50_ms": round(1000 * seconds[len(seconds) // 2], 1) if seconds else None,
        "misses": misses,
    }


def calibrate(assistant: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Fit the routing model on our questions; report 5-fold accuracy so the fit is not judged on itself."""
    router = assistant.next_reads.router
    feats = [router.features(r["question"]) for r in rows]
    labels = [1 if r["kind"] == "next" else 0 for r in rows]
    folds = 5
    right = 0
    for f in range(folds):
        train = [i for i in range(len(rows)) if i % folds != f]
        test = [i for i in range(len(rows)) if i % folds == f]
        w, b = fit_logistic([feats[i] for i in train], [labels[i] for i in train])
        for i in test:
            z = b + sum(w[k] * feats[i][k] for k in FEATURES)
            right += (z >= 0) == bool(labels[i])
    weights, intercept = fit_logistic(feats, labels)
    return {"route_weights": weights, "route_intercept": intercept, "cv_accuracy": round(right / len(rows), 3),
            "rows": len(rows)}


def run_learners(front: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Route + plan each generated message; score against the label the generator sampled."""
    routed = 0
    precisions: list[float] = []
    violations = picked = now_picked = 0
    seconds: list[float] = []
    by_scenario: dict[str, list[float]] = {}
    misses: list[dict[str, Any]] = []
    for row in rows:
        t0 = time.perf_counter()
        decision = front.decide(row["question"])
        answer = front.answer(row["question"], set(), k=3) if decision.route == "next" else None
        seconds.append(time.perf_counter() - t0)
        routed += answer is not None
        picks = [c.resource_id for c in answer.citations][:3] if answer is not None else []
        good = set(row["gold"]) | set(row["accept"])
        need = min(3, len(row["gold"])) if row["subject"] else 3
        hits = sum(1 for p in picks if p in good)
        precision = min(1.0, hits / need) if need else 1.0
        precisions.append(precision)
        by_scenario.setdefault(row["scenario"], []).append(precision)
        # an item the learner is in the middle of (`synth_learners.py --reading-now`) is as wrong a pick as one read
        said = set(row["read"]) | set(row.get("reading_now", []))
        bad = [p for p in picks if p in said]
        now_picked += sum(1 for p in picks if p in row.get("reading_now", []))
        violations += len(bad)
        picked += len(picks)
        if precision < 1 or bad:
            misses.append({"id": row["id"], "scenario": row["scenario"], "question": row["question"],
                           "routed": decision.route, "picks": picks, "gold": row["gold"], "read_picks": bad,
                           "understood": answer.read_ids if answer is not None else [],
                           "focus": answer.focus_topics if answer is not None else [], "want_focus": row["focus"]})
    seconds.sort()
    p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))] if seconds else 0.0
    return {
        "messages": len(rows), "routed_to_planner": f"{routed}/{len(rows)}",
        "routed_per_20": round(20 * routed / len(rows), 1) if rows else None,
        "precision_at_3": round(sum(precisions) / len(precisions), 3) if precisions else None,
        "precision_by_scenario": {k: round(sum(v) / len(v), 3) for k, v in sorted(by_scenario.items())},
        "read_violations": violations, "picks": picked, "reading_now_picks": now_picked,
        "read_violation_rate": round(violations / picked, 4) if picked else None,
        "p50_ms": round(1000 * seconds[len(seconds) // 2], 1) if seconds else None,
        "p95_ms": round(1000 * p95, 1),
        "misses": misses,
    }


class DiskQueries:
    """The embedder with query vectors kept in an on-disk cache too (`--embed-cache`): repeated runs of the
    same messages (ablations) then time the rules, not the model. Never used for the latency figures."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_query(self, text: str) -> Any:
        return self.embedder.embed_documents([text])[0]

    def embed_documents(self, texts: Any) -> Any:
        return self.embedder.embed_documents(texts)

    def english_words(self) -> set[str]:
        return self.embedder.english_words()


# The word lists of assistant/reading.py and assistant/route.py that `--ablate NAME` empties for one run.
ABLATABLE = {
    "DONE_WORDS": "assistant.reading", "NEGATION_WORDS": "assistant.reading", "WANT_WORDS": "assistant.reading",
    "GROUP_WORDS": "assistant.reading",
    "KIND_NOUNS": "assistant.reading", "SUBJECT_CUES": "assistant.reading", "BEGUN_WORDS": "assistant.reading",
    "REQUEST_WORDS": "assistant.route", "GAP_QUESTION_WORDS": "assistant.reading", "DIFFICULTY_WORDS": "assistant.reading",
    # switches rather than lists: matching topics through their items, a topic said by its whole name first
    "ITEM_VECTORS": "assistant.reading", "NAMED_TOPIC_FIRST": "assistant.reading",
}


def ablate(name: str) -> None:
    """Empty one word list in place (a frozenset is rebound in every module that imported it)."""
    import importlib

    module = importlib.import_module(ABLATABLE[name])
    old = getattr(module, name)
    empty: Any = False if isinstance(old, bool) else {} if isinstance(old, dict) else frozenset()
    for mod_name in ("assistant.reading", "assistant.route", "assistant.mentions", "assistant.planner"):
        mod = sys.modules.get(mod_name) or importlib.import_module(mod_name)
        if hasattr(mod, name) and getattr(mod, name) is old:
            setattr(mod, name, empty)


def learners_front(embed_cache: Path | None = None) -> Any:
    from assistant.planner import NextReads
    from core.settings import load_settings
    from index.embed import Embedder, EmbeddingCache
    from ingest.catalog import load_catalog

    settings = load_settings()
    knobs = settings.planner
    embedder: Any = Embedder(settings, cache=EmbeddingCache(embed_cache or Path(":memory:")))
    if embed_cache is not None:
        embedder = DiskQueries(embedder)
    return NextReads(load_catalog(), embedder=embedder, route_weights=dict(knobs.route_weights),
                     route_intercept=knobs.route_intercept, route_threshold=knobs.route_threshold,
                     focus_threshold=knobs.focus_threshold)


def learners_report(args: argparse.Namespace) -> dict[str, Any]:
    for name in args.ablate:
        ablate(name)
    front = learners_front(args.embed_cache)
    rows = [row for path in args.learners_file for row in load(path)]
    front.decide("warm up: what should I read next?")
    report: dict[str, Any] = {}
    if args.ablate:
        report["ablated"] = args.ablate
    tune = set(args.tune_seeds)
    if not args.unseen_only:
        report["tuned on: seeds " + ", ".join(map(str, sorted(tune)))] = run_learners(
            front, [r for r in rows if r["seed"] in tune])
    if not args.tuned_only:
        report["unseen: other seeds"] = run_learners(front, [r for r in rows if r["seed"] not in tune])
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="data dir with an index (default GPUGUIDE_HOME)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev set, reported apart (never tuned on)")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--regold", action="store_true", help="recompute gold/accept of our next questions")
    parser.add_argument("--misses", action="store_true", help="list the questions that went wrong")
    parser.add_argument("--learners", action="store_true", help="the generated learner messages instead")
    parser.add_argument("--learners-file", type=Path, nargs="+", default=[LEARNERS],
                        help="--learners: one or more message files, pooled (the seeds say which are tuned on)")
    parser.add_argument("--embed-cache", type=Path, default=None,
                        help="keep query vectors in this file across runs (ablations; not for latency)")
    parser.add_argument("--ablate", action="append", default=[], choices=sorted(ABLATABLE),
                        help="empty this word list for the run (repeatable)")
    parser.add_argument("--tune-seeds", type=int, nargs="+", default=list(TUNE_SEEDS),
                        help="--learners: the generator seeds tuned on (the others are reported as unseen)")
    parser.add_argument("--tuned-only", action="store_true", help="--learners: the tune seeds only")
    parser.add_argument("--unseen-only", action="store_true", help="--learners: the other seeds only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.home:
        os.environ["GPUGUIDE_HOME"] = str(args.home)
    if args.learners:
        report = learners_report(args)
        if not args.misses:
            for part in report.values():
                if isinstance(part, dict):
                    part["misses"] = len(part["misses"])
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0

    from assistant.chain import Assistant
    from assistant.services import current_catalog
    from assistant.profile import Profile
    from core.settings import load_settings
    from index.search import load_searcher

    settings = load_settings()
    resources = current_catalog(settings)
    rows = load(args.questions)
    if args.regold:
        for row in rows:
            if row["kind"] == "next":
                row["gold"], row["accept"] = oracle_gold(resources, row["read"], row.get("focus", []))
        tmp = args.questions.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        tmp.replace(args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        profile = Profile(Path(tmp) / "profile.sqlite3")  # empty: only the sentence says what was read
        assistant = Assistant(settings, load_searcher(settings), resources=resources, profile=profile)
        if args.calibrate:
            print(json.dumps(calibrate(assistant, [r for r in rows if r.get("split") == "calibration"]), indent=2))
            return 0
        report: dict[str, Any] = {
            "ours: calibration": run(assistant, [r for r in rows if r.get("split") == "calibration"]),
            "ours: check (written after tuning)": run(assistant, [r for r in rows if r.get("split") == "check"]),
            "ours: fresh (written last)": run(assistant, [r for r in rows if r.get("split") == "fresh"]),
            "ours: fresh2 (written after the fresh fixes)": run(assistant, [r for r in rows if r.get("split") == "fresh2"]),
            "ours: fresh3 (written after the fresh2 fixes)": run(assistant, [r for r in rows if r.get("split") == "fresh3"]),
            "ours: fresh4 (written after the fresh3 fixes)": run(assistant, [r for r in rows if r.get("split") == "fresh4"]),
            "ours: fresh5 (written after the fresh4 fixes)": run(assistant, [r for r in rows if r.get("split") == "fresh5"]),
        }
        if args.dev.exists():
            dev_rows = [{**r, "kind": "next" if r["kind"] == "next" else "search"} for r in load(args.dev)]
            report["dev set"] = run(assistant, dev_rows)
    if not args.misses:
        for part in report.values():
            part["misses"] = len(part["misses"])
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
