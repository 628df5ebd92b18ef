"""The `gpuguide` command: one subcommand per operation, each a thin shell over the front object
(`assistant.guide.Guide`): parse the arguments, call the Guide, print what it returns.

Errors a user can fix (`UserError`) print as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assistant import doctor
from assistant.guide import Guide
from assistant.services import eval_planner
from core.errors import UserError
from core.settings import LLM_BACKENDS, Settings, load_settings

log = logging.getLogger("gpuguide")

Handler = Callable[[argparse.Namespace, Settings], int]


def _parse_set(pairs: Sequence[str]) -> dict[str, Any]:
    """`--set crawl.concurrency=4` → {"crawl": {"concurrency": 4}}; values are JSON when they parse."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--set {pair!r}: expected KEY=VALUE, e.g. --set crawl.concurrency=4")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


# --- config & catalog ----------------------------------------------------------------------------


def cmd_config(args: argparse.Namespace, settings: Settings) -> int:
    data = settings.model_dump(mode="json")
    if args.json:
        _print_json(data)
        return 0
    print(f"# effective settings (defaults → {settings.config_file} → GPUGUIDE_* env → flags)")
    for group, values in data.items():
        if isinstance(values, dict):
            for key, value in values.items():
                print(f"{group}.{key} = {json.dumps(value, ensure_ascii=False)}")
        else:
            print(f"{group} = {json.dumps(values, ensure_ascii=False)}")
    return 0


def cmd_catalog(args: argparse.Namespace, settings: Settings) -> int:
    from ingest.catalog import filter_resources, parse_source

    if args.catalog_command == "sync":
        return _catalog_sync(args, settings)
    source = args.source or settings.catalog.source
    resources = parse_source(source, settings.crawl).resources if source else Guide(settings).resources
    resources = filter_resources(resources, tier=args.tier, topic=args.topic, kind=args.kind)
    if args.json:
        _print_json([r.to_dict() for r in resources])
        return 0
    last_place = None
    for res in resources:
        if res.place != last_place:
            print(f"\n{res.place}")
            last_place = res.place
        by = f" — {res.authors}" if res.authors else ""
        print(f"  [{res.kind}] {res.title}{by}\n      {res.url or '(no link)'}")
    print(f"\n{len(resources)} resources")
    return 0


# --- ingest & chunks -----------------------------------------------------------------------------


def _ingest_overrides(args: argparse.Namespace) -> dict[str, Any]:
    crawl: dict[str, Any] = {}
    if args.warc:
        crawl["warcs"] = args.warc
        crawl["offline"] = True if args.offline is None else args.offline
    elif args.offline is not None:
        crawl["offline"] = args.offline
    if args.depth is not None:
        crawl["follow_depth"] = args.depth
    if args.same_site is not None:
        crawl["same_site"] = args.same_site
    return {"crawl": crawl} if crawl else {}


def _print_report(report: Any, as_json: bool) -> None:
    rows = [r.__dict__ for r in report.rows]
    if as_json:
        _print_json({"run": report.info.__dict__, "urls": rows})
        return
    info = report.info
    print(f"last ingest: {info.started} → {info.finished}")
    print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(info.counts.items())))
    for row in rows:
        reason = f"  ({row['reason']})" if row["reason"] else ""
        print(f"  {row['status']:<18} {row['bytes']:>9,d} B {row['chunks']:>4} chunks {row['seconds']:>6.2f}s  {row['url'] or row['resource_id']}{reason}")


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    guide = Guide(settings)
    if args.report:
        report = guide.last_report()
        if report is None:
            raise UserError(f"no ingest has run in {settings.home} yet; run 'gpuguide ingest'")
        _print_report(report, args.json)
        return 0
    only = None
    if args.pending:
        only = {r.id for r in guide.pending()}
        if not only:
            print("no resource waits for a crawl")
            return 0
    result = guide.ingest(refresh=args.refresh, progress=not args.json, only=only)
    if not args.no_index:
        _build_index(guide, rebuild=False, quiet=args.json)
    report = guide.last_report()
    if args.json:
        _print_report(report, True)
    else:
        counts = result.info.counts
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in ("documents", "chunks"))
        print(
            f"ingested {result.documents} pages ({result.reused} unchanged), {result.chunks} chunks "
            f"+ {result.card_chunks} catalog cards in {result.seconds:.1f}s; urls: {statuses}"
        )
        print(f"store: {settings.store_file} (see 'gpuguide ingest --report')")
    if result.documents == 0:
        print("gpuguide: no page text was produced (catalog cards only); check the report", file=sys.stderr)
        return 1
    return 0


def _catalog_sync(args: argparse.Namespace, settings: Settings) -> int:
    guide = Guide(settings)
    record = guide.sync_list(args.from_, force=args.force)
    print(f"synced {record.resources} resources ({record.format} format) from {record.source} "
          f"into {settings.catalog_file}")
    print(record.summary())
    for what, entries in (("added", record.added), ("removed", record.removed)):
        for entry in entries:
            print(f"  {what}: {entry['title']}")
    for entry in record.changed:
        print(f"  changed ({', '.join(entry.fields)}): {entry.title}")
    if not record.unchanged:
        queued = len(guide.pending()) if settings.store_file.exists() else 0
        crawl = f"; {queued} resources wait for a crawl ('gpuguide ingest --pending')" if queued else ""
        print(f"run 'gpuguide index' to update the cards and the index (no re-crawl){crawl}")
    return 0


def _build_index(guide: Guide, rebuild: bool, quiet: bool = False) -> Any:
    refresh, report = guide.index(rebuild=rebuild)
    if not quiet:
        if not refresh.empty:
            print(refresh.summary())
        print(
            f"index: {report.chunks} chunks of {report.resources} resources ({report.index_type}; "
            f"{report.encoded} embedded, {report.cached} from cache) in {report.seconds:.1f}s"
        )
    return report


def cmd_chunks(args: argparse.Namespace, settings: Settings) -> int:
    guide = Guide(settings)
    resource_id = guide.resolve(args.resource).id if args.resource else None
    chunks = guide.stored_chunks(resource_id)
    for chunk in chunks:
        record = {
            "chunk_id": chunk.chunk_id, "resource_id": chunk.resource_id, "url": chunk.url,
            "heading_path": list(chunk.heading_path), "start": chunk.start, "end": chunk.end,
            "source_kind": chunk.source_kind, "text": chunk.text,
        }
        if args.json:
            print(json.dumps(record, ensure_ascii=False))
        else:
            path = " › ".join(chunk.heading_path)
            print(f"--- {chunk.chunk_id}  {chunk.url}  [{path}] {chunk.start}-{chunk.end}\n{chunk.text}\n")
    if not chunks:
        print("gpuguide: no chunks stored; run 'gpuguide ingest' first", file=sys.stderr)
        return 1
    return 0


# --- index, search, eval ------------------------------------------------------------------------


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    if not settings.store_file.exists():
        raise UserError(f"no ingested chunks in {settings.home}; run 'gpuguide ingest' first")
    _build_index(Guide(settings), rebuild=args.rebuild)
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    guide = Guide(settings)
    hits = guide.search(args.query, k=args.k, mode=args.mode, tier=args.tier, topic=args.topic, kind=args.kind,
                        unread_only=args.unread)
    outcome = guide.outcome(args.query, hits)  # search never refuses: it labels what it shows
    if args.json:
        from assistant.serialize import search_dict

        scope = guide.scope(args.query, hits)
        _print_json(search_dict(args.query, outcome, scope, hits, settings.catalog.list_url))
        return 0
    if hits and outcome != "answer":
        why = "the guide may not cover this" if outcome == "out_of_scope" else "no resource matches closely"
        print(f"weak match: {why}; the nearest resources are below.\n")
    for i, hit in enumerate(hits, start=1):
        res = hit.resource
        passage = " ".join(hit.passages[0][0].text.split()[:50]) if hit.passages else res.note
        print(f"{i}. {res.title}  [{res.kind}]  score {hit.score:.4f}\n   {res.place}\n   {res.url}\n   > {passage}\n")
    if not hits:
        print("no results")
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from index.evaluate import ALL_MODES, PRODUCT_MODE, run_eval

    requested = args.mode or [PRODUCT_MODE]
    modes = list(ALL_MODES) if "all" in requested else list(dict.fromkeys(requested))
    report = run_eval(args.questions, modes=modes, k=args.k, settings=settings, planner=eval_planner(settings))
    if args.json:
        _print_json(report)
        return 0
    keys = ["recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "abstention_accuracy", "false_abstention_rate"]
    print(f"{'mode':<16}" + "".join(f"{k:>22}" for k in keys))
    for mode, metrics in report["metrics"].items():
        cells = []
        for key in keys:
            value = metrics.get(key)
            cells.append(f"{value:>22.3f}" if isinstance(value, (int, float)) else f"{'-':>22}")
        print(f"{mode:<16}" + "".join(cells))
    for mode, metrics in report["metrics"].items():
        table = metrics["confusion"]
        label = f"outcomes ({mode})"
        print(f"\n{label:<26}{'answer':>10}{'weak':>10}{'out_of_scope':>14}")
        for side in ("in_scope", "out_of_scope"):
            row = table[side]
            print(f"  {side:<24}{row['answer']:>10}{row['weak']:>10}{row['out_of_scope']:>14}")
    next_rows = {m: v.get("by_kind", {}).get("next") for m, v in report["metrics"].items()}
    first = next(iter(next_rows.values()), None)
    if first:
        print(f"reading planner ('next' questions): recall@5 {first.get('recall@5', 0):.3f}, mrr@10 {first.get('mrr@10', 0):.3f}")
    return 0


# --- ask, next, read -----------------------------------------------------------------------------


def _llm_overrides(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "llm", None):
        return {"llm": {"backend": "extractive" if args.llm == "none" else args.llm}}
    return {}


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.chain import Query

    guide = Guide(settings)
    query = Query(args.question, tier=args.tier, topic=args.topic, kind=args.kind, unread_only=args.unread)
    if args.json:
        from assistant.serialize import answer_dict

        _print_json(answer_dict(guide.ask(query)))
        return 0
    answer = None
    streamed = False
    for event in guide.stream(query):
        if event.kind == "sources" and event.answer is not None and settings.llm.backend != "extractive" and not event.answer.abstained and event.answer.route == "search":
            print("sources: " + "; ".join(f"[{c.n}] {c.title}" for c in event.answer.citations), flush=True)
        elif event.kind == "redraft":
            print("\nsecond draft, from the closest passages (no sentence of the first held up): ", end="",
                  file=sys.stderr, flush=True)
        elif event.kind == "token":
            # The unchecked draft goes to stderr as it streams; stdout gets only the verified answer.
            print(("draft: " if not streamed else "") + event.token, end="", file=sys.stderr, flush=True)
            streamed = True
        elif event.kind == "final":
            answer = event.answer
    if streamed:
        print("\n", file=sys.stderr)
    assert answer is not None
    if answer.weak:
        print("(weak match: the guide's closest sources may not answer this exactly)")
    if answer.fallback:
        print(f"(quoted from the sources: {answer.fallback})")
    print(answer.text + "\n")
    if answer.dropped:
        print("removed by the source check:")
        for d in answer.dropped:
            print(f"  - {d.text} ({d.reason})")
        print()
    for c in answer.citations:
        note = ("" if c.cited else " (read for this answer, not cited by it)") + (" ✓ read" if c.read else "")
        print(f"[{c.n}] {c.title} — {c.place}{note}\n    {c.link or c.url}\n    in the list: {c.list_url}")
    return 0


def cmd_next(args: argparse.Namespace, settings: Settings) -> int:
    from assistant.planner import plan_time

    guide = Guide(settings)
    planned = guide.plan(interest=args.interest or "", k=args.k, read=args.read)
    plan, said, times = planned.plan, planned.said, guide.times()
    if args.json:
        from assistant.serialize import plan_dict

        _print_json(plan_dict(plan, settings.catalog.list_url, counted_as_read=said, read=planned.read, times=times))
        return 0
    if said:
        print("Counting as read: " + "; ".join(r.title for r in guide.resources if r.id in said) + "\n")
    for i, pick in enumerate(plan.picks, start=1):
        took = times[pick.resource.id].label()
        print(f"{i}. {pick.resource.title}  ({took})\n   {pick.reason}\n   {pick.resource.url or '(no link)'}")
    if plan.picks:
        print(f"\nreading time of these picks: {plan_time(plan, times).label()}")
    return 0


READ_ACTIONS = {"add": "read", "remove": "unread", "reading": "reading", "skip": "skipped", "unread": "unread",
                "done": "read"}


def cmd_read(args: argparse.Namespace, settings: Settings) -> int:
    guide = Guide(settings)
    if args.action == "list":
        states = guide.states()
        for res in guide.resources:
            if res.id in states:
                print(f"{states[res.id]}\t{res.id}\t{res.place}\t{res.title}")
        return 0
    if not args.refs:
        raise UserError(f"'gpuguide read {args.action}' needs at least one URL or id")
    ids = [guide.resolve(ref).id for ref in args.refs]
    state = READ_ACTIONS[args.action]
    guide.set_state(ids, state)
    print(f"marked {state}: {', '.join(ids)}")
    return 0


def cmd_path(args: argparse.Namespace, settings: Settings) -> int:
    path = Guide(settings).learning_path()
    if args.json:
        _print_json(path.to_dict(settings.catalog.list_url))
        return 0
    for group in path.groups:
        counts = ", ".join(f"{group.count(s)} {s}" for s in ("read", "reading", "skipped") if group.count(s))
        print(f"{group.label}: {len(group.items)} resources{' (' + counts + ')' if counts else ''}, "
              f"time left {group.left.label()}")
        if args.all:
            for item in group.items:
                print(f"    [{item.state:<7}] {item.estimate.label():>10}  {item.resource.title}")
    print(f"\nwhole path: {path.summary()}")
    return 0


def _digest(args: argparse.Namespace, settings: Settings, kind: str) -> int:
    from assistant.digest import render_text

    digest = Guide(settings).digest(args.resource, kind, refresh=args.refresh)
    if args.json:
        _print_json(digest.to_dict())
    else:
        print(render_text(digest))
    return 0


def cmd_summary(args: argparse.Namespace, settings: Settings) -> int:
    return _digest(args, settings, "summary")


def cmd_self_check(args: argparse.Namespace, settings: Settings) -> int:
    return _digest(args, settings, "self-check")


# The commands' names before the feature had one name; still accepted, not listed in --help.
OLD_DIGEST_COMMANDS = {"explain": "summary", "quiz": "self-check"}


def _old_digest_command(handler: Any, old: str) -> Any:
    """`handler` behind a command's old name, with a one-line note on stderr saying the new one."""
    def run(args: argparse.Namespace, settings: Settings) -> int:
        print(f"gpuguide: '{old}' is now 'gpuguide {OLD_DIGEST_COMMANDS[old]}'; the old name will go",
              file=sys.stderr)
        return int(handler(args, settings) or 0)
    return run


def _digest_overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {"learning": {"digest_backend": "extractive"}} if getattr(args, "extractive", False) else {}


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    if not (args.markdown or args.anki):
        raise UserError("'gpuguide export' needs --markdown FILE and/or --anki FILE")
    done = Guide(settings).export(markdown=args.markdown, anki=args.anki, make_missing=args.make_missing)
    if args.markdown:
        print(f"path written to {args.markdown}: {done.path_summary}")
    if args.anki:
        print(f"{done.questions} self-check questions of {done.resources} resources written to {args.anki} "
              "(Anki: File › Import)")
        if not done.resources:
            print("gpuguide: no self-checks made yet; run 'gpuguide self-check ID' or add --make-missing", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import ui

    demo, url = ui.start(settings)
    print(f"gpuguide: serving on {url}  (API: {url}?view=api, MCP: {url}gradio_api/mcp/); Ctrl-C stops", flush=True)
    ui.wait(demo)
    return 0


def _serve_overrides(args: argparse.Namespace) -> dict[str, Any]:
    ui = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    return {"ui": ui} if ui else {}


# --- parser --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuguide",
        description="Search and ask a tiered reading list of GPU performance-engineering resources.",
    )
    parser.add_argument("--home", help="data dir (default: GPUGUIDE_HOME or the platform's user data dir)")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override any setting, e.g. --set crawl.concurrency=4 (repeatable)",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("config", help="print the effective settings")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_config)

    p = sub.add_parser("catalog", help="print the catalog in use (or parse --source without storing)")
    p.add_argument("--source", help="a list file or URL to parse instead of the catalog in use")
    p.add_argument("--tier", type=int)
    p.add_argument("--topic", help="substring of the topic, case-insensitive")
    p.add_argument("--kind", help="paper / blog / docs / repo / book / video / community / model / site")
    p.add_argument("--json", action="store_true", help="a JSON array of resource records")
    p.set_defaults(handler=cmd_catalog, catalog_command=None)
    catalog_sub = p.add_subparsers(dest="catalog_command", metavar="sync")
    ps = catalog_sub.add_parser("sync", help="re-parse a list into the data dir; it then overrides the bundled one")
    ps.add_argument("--from", dest="from_", metavar="PATH_OR_URL",
                    help="a list file or URL (default: catalog.upstream_url, the list's raw README upstream)")
    ps.add_argument("--force", action="store_true", help="accept a list that lost many entries")

    p = sub.add_parser("ingest", help="crawl (or replay archives), extract, chunk, store, then index")
    p.add_argument("--warc", action="append", type=Path, default=[], metavar="FILE",
                   help="replay this web archive instead of the network (repeatable; implies --offline)")
    p.add_argument("--offline", action=argparse.BooleanOptionalAction, default=None,
                   help="no network: replay --warc files (default: the archives in the data dir)")
    p.add_argument("--refresh", action="store_true", help="re-fetch archived pages conditionally (ETag/Last-Modified)")
    p.add_argument("--depth", type=int, choices=[0, 1], help="follow same-site links of multi-part posts")
    p.add_argument("--same-site", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--no-index", action="store_true", help="skip building the search index afterwards")
    p.add_argument("--report", action="store_true", help="print the last run's per-URL report and exit")
    p.add_argument("--pending", action="store_true",
                   help="crawl only the resources no crawl has tried yet (e.g. the ones a catalog sync added)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_ingest, settings_overrides=_ingest_overrides)

    p = sub.add_parser("chunks", help="print stored chunks (what the assistant knows about a resource)")
    p.add_argument("--resource", metavar="ID_OR_URL")
    p.add_argument("--json", action="store_true", help="JSON Lines")
    p.set_defaults(handler=cmd_chunks)

    p = sub.add_parser("index", help="build the search index from the ingested chunks (incremental)")
    p.add_argument("--rebuild", action="store_true", help="rebuild from scratch (after a model or chunker change)")
    p.set_defaults(handler=cmd_index)

    def add_filters(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tier", type=int)
        p.add_argument("--topic", help="substring of the topic, case-insensitive")
        p.add_argument("--kind", help="paper / blog / docs / repo / book / video / community / model / site")
        p.add_argument("--unread", action="store_true", help="only resources not marked read")

    p = sub.add_parser("search", help="hybrid search over the guide (no LLM)")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--mode", default="hybrid+rerank", choices=["bm25", "dense", "hybrid", "hybrid+rerank"])
    add_filters(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("eval", help="retrieval quality and outcomes on a question set (JSON Lines: id, question)")
    p.add_argument("--questions", required=True, type=Path, metavar="FILE")
    p.add_argument(
        "--mode", action="append",
        choices=["bm25", "dense", "hybrid", "hybrid+rerank", "langchain-faiss", "all"],
        help="repeatable; default: the product's hybrid+rerank; all: every mode side by side",
    )
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("ask", help="a cited answer from the guide")
    p.add_argument("question")
    p.add_argument("--llm", choices=[b for b in LLM_BACKENDS if b != "extractive"] + ["none"],
                   help="none: extractive, no LLM")
    add_filters(p)
    p.add_argument("--json", action="store_true", help="the Answer record")
    p.set_defaults(handler=cmd_ask, settings_overrides=_llm_overrides)

    p = sub.add_parser("next", help="what to read next, in the guide's tier order")
    p.add_argument("--read", action="append", default=[], metavar="WHAT",
                   help="count as read for this plan (repeatable): an id, a URL, or words such as "
                        "\"the Tier 1 profiling material\" or \"siboehm's matmul post\"")
    p.add_argument("--interest", help="what you want to get good at")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_next)

    p = sub.add_parser("read", help="reading states: read add|done|reading|skip|unread|remove|list ID...")
    p.add_argument("action", choices=[*READ_ACTIONS, "list"],
                   help="add/done: read; reading: started; skip: not for me; unread/remove: back to unread; "
                        "list: every resource that is not unread")
    p.add_argument("refs", nargs="*", metavar="URL_OR_ID")
    p.set_defaults(handler=cmd_read)

    digest_commands: list[tuple[str, Any, str | None]] = [
        ("summary", cmd_summary, "a short summary with key points, each cited to a passage"),
        ("self-check", cmd_self_check, "three self-check questions with answers, each cited to a passage"),
    ]
    handlers = {name: handler for name, handler, _ in digest_commands}
    # the old names get no help, so --help does not list them
    digest_commands += [(old, _old_digest_command(handlers[new], old), None) for old, new in OLD_DIGEST_COMMANDS.items()]
    for name, handler, what in digest_commands:
        p = sub.add_parser(name, help=f"{what}, from the resource's own text (cached in the data dir)") if what else \
            sub.add_parser(name)
        p.add_argument("resource", metavar="ID_OR_URL")
        p.add_argument("--refresh", action="store_true", help="make it again instead of using the cached one")
        p.add_argument("--extractive", action="store_true", help="no model: sentences of the text itself")
        p.add_argument("--json", action="store_true")
        p.set_defaults(handler=handler, settings_overrides=_digest_overrides)

    p = sub.add_parser("export", help="your path and progress as Markdown, self-check questions as Anki CSV")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="a checklist in the list's order with states and times")
    p.add_argument("--anki", type=Path, metavar="FILE", help="the self-check questions made so far, Anki-importable CSV")
    p.add_argument("--make-missing", action="store_true",
                   help="with --anki: first make the self-checks of resources you are reading or have read")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("path", help="the learning path: states and time left per topic × tier and in all")
    p.add_argument("--all", action="store_true", help="also list every resource with its state and time")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_path)

    p = sub.add_parser("serve", help="start the web app (chat, guide, status; API and MCP) and print its URL")
    p.add_argument("--host", help="address to listen on (default ui.host, 127.0.0.1); others need ui.auth_*")
    p.add_argument("--port", type=int, help="port (default ui.port, 7860)")
    p.set_defaults(handler=cmd_serve, settings_overrides=_serve_overrides)

    p = sub.add_parser("doctor", help=doctor.HELP)
    doctor.add_arguments(p)
    p.set_defaults(handler=doctor.command)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


# Later stages register their subcommands here (kept as a list so the parser stays in one place).
_EXTRA_COMMANDS: list[Callable[[Any], None]] = []


def _settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides = _parse_set(args.overrides)
    if args.home:
        overrides["home"] = args.home
    command_overrides = getattr(args, "settings_overrides", None)
    if command_overrides:
        _merge(overrides, command_overrides(args))
    return overrides


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = load_settings(**_settings_overrides(args))
        return int(args.handler(args, settings) or 0)
    except UserError as exc:
        print(f"gpuguide: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gpuguide: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `gpuguide catalog | head`
        sys.stderr.close()
        return 0
    except OSError as exc:  # a full disk, a read-only data dir, ...: writes are atomic, nothing was replaced
        where = f" ({exc.filename})" if exc.filename else ""
        hint = "free some space and retry" if exc.errno == errno.ENOSPC else "check the data dir and retry"
        print(f"gpuguide: error: {exc.strerror or exc}{where}; the previous data is kept; {hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
