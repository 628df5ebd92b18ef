"""The `gpuguide` command: one subcommand per pipeline stage, each a thin shell over that stage's API.

Errors a user can fix (`UserError`) print as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ingest.errors import UserError
from ingest.settings import Settings, load_settings

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
    from ingest.catalog import filter_resources, load_catalog, parse_source, sync_catalog

    if args.catalog_command == "sync":
        parse = sync_catalog(
            args.from_, settings.catalog_file, force=args.force, max_shrink=settings.catalog.max_shrink
        )
        print(f"synced {len(parse.resources)} resources ({parse.format} format) from {args.from_} into {settings.catalog_file}")
        return 0
    source = args.source or settings.catalog.source
    resources = parse_source(source).resources if source else load_catalog(synced_file=settings.catalog_file)
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
    ps.add_argument("--from", dest="from_", required=True, metavar="PATH_OR_URL")
    ps.add_argument("--force", action="store_true", help="accept a list that lost many entries")

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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
