"""The front object: every operation of gpuguide, built from one `Settings`, for every shell.

The CLI (assistant/cli.py), the app's tab handlers and API tools (assistant/app/), `ui.py` and bench/ call a
`Guide` and format what it returns; none of them assembles a stage itself. So a setting reaches every path
the same way (e.g. `planner.focus_threshold` shapes `gpuguide next`, the Guide tab's plan and the
`next_reads` tool alike), and an operation has one implementation.

What it owns, in pipeline order: the list (sync), the store (ingest), the index (build, load, swap), search,
answers (one routing decision, then the planner or the answer chain), the reading state, the path and the
next reads, summaries and self-checks, exports, the status, and the background jobs (assistant/jobs.py).
Expensive parts (the embedder, the loaded index, the answer chain) load on first use and once per process;
a re-index swaps them under a lock, so a running answer keeps the one it started with.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.app_state import IndexStatus, IngestJob, ProgressRow
from assistant.jobs import BackgroundJobs, reingest, update
from core.errors import UserError
from core.records import Resource
from core.settings import Settings

if TYPE_CHECKING:
    from assistant.chain import AnswerEvent, Assistant, Query
    from assistant.digest import Digest, DigestMaker
    from assistant.path import LearningPath
    from assistant.planner import Plan
    from assistant.readtime import Estimate
    from assistant.records import Answer
    from assistant.route import RouteDecision
    from index.records import BuildReport, ResourceHit
    from index.search import Searcher
    from ingest.listsync import SyncRecord
    from ingest.pipeline import CrawlProgress, IngestResult
    from ingest.refresh import CatalogRefresh
    from ingest.store import RunReport

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000  # the answer chain's limit (assistant/chain.py), checked before anything loads


@dataclass
class NextPlan:
    """A plan of next reads with what it counted as read: `said` (the request's references) and `read`
    (everything the plan skipped as read: the profile's and the request's)."""

    plan: Plan
    said: set[str]
    read: set[str]


@dataclass
class Exported:
    """What an export wrote: the path's summary line, and the self-checks (questions, resources)."""

    path_summary: str = ""
    questions: int = 0
    resources: int = 0


class Guide:
    """One per process (the app) or per command (the CLI); cheap to build, loads on first use."""

    def __init__(self, settings: Settings, resources: list[Resource] | None = None, embedder: Any = None) -> None:
        from assistant.profile import Profile

        self.settings = settings
        self._resources = resources
        self._embedder = embedder
        self.profile = Profile(settings.profile_file)
        self.jobs = BackgroundJobs()
        self._lock = threading.Lock()
        self._searcher: Searcher | None = None
        self._assistant: Assistant | None = None
        self._times: tuple[list[Any], dict[str, Estimate]] | None = None
        self._digests: DigestMaker | None = None

    # --- the list ----------------------------------------------------------------------------------

    @property
    def resources(self) -> list[Resource]:
        """The catalog in use: `catalog.source`, else the synced list, else the bundled one."""
        if self._resources is None:
            from ingest.catalog import current_catalog

            self._resources = current_catalog(self.settings)
        return self._resources

    def reload_catalog(self) -> list[Resource]:
        """Read the catalog again (after a `catalog sync`, in this process or another)."""
        self._resources = None
        return self.resources

    def resolve(self, ref: str) -> Resource:
        """A resource from an id, a URL or an exact title; a UserError naming the fix otherwise."""
        from assistant.profile import resolve_resource

        return resolve_resource(ref, self.resources)

    def sync_list(self, source: str | None = None, force: bool = False) -> SyncRecord:
        """Re-parse a list into the data dir (it then overrides the bundled one); no crawl, no index."""
        from ingest.listsync import sync_list

        record = sync_list(self.settings, source, force=force)
        self.reload_catalog()
        return record

    def pending(self) -> list[Resource]:
        """Resources no crawl has tried yet (e.g. the ones a sync added)."""
        from ingest.refresh import pending_crawl

        return pending_crawl(self.settings, self.resources)

    # --- ingest and index --------------------------------------------------------------------------

    def ingest(self, *, refresh: bool = False, only: set[str] | None = None, progress: bool = False,
               on_progress: Callable[[CrawlProgress], None] | None = None) -> IngestResult:
        """Crawl (or replay `crawl.warcs`), extract, chunk and store; `only` limits it to these ids."""
        from ingest.pipeline import run_ingest

        for warc in self.settings.crawl.warcs:
            if not warc.is_file():
                raise UserError(f"--warc {warc}: no such file; pass a .warc or .warc.gz archive")
        return run_ingest(self.resources, self.settings, refresh=refresh, progress=progress, only=only,
                          on_progress=on_progress)

    def last_report(self) -> RunReport | None:
        from ingest.store import ChunkStore

        return ChunkStore(self.settings.store_file).last_report() if self.settings.store_file.exists() else None

    def stored_chunks(self, resource_id: str | None = None) -> list[Any]:
        from ingest.store import ChunkStore

        return ChunkStore(self.settings.store_file).chunks(resource_id)

    def refresh_cards(self) -> CatalogRefresh:
        """Bring the store's cards and context headers in line with the catalog (a list update needs no crawl)."""
        from ingest.refresh import refresh_from_catalog

        return refresh_from_catalog(self.settings, self.resources)

    def index(self, rebuild: bool = False) -> tuple[CatalogRefresh, BuildReport]:
        """Cards in line with the list, then every stored chunk indexed (incremental unless `rebuild`); a loaded
        index is swapped for the new one."""
        from index.build import build_index

        refresh = self.refresh_cards()
        report = build_index(self.stored_chunks(), self.resources, self.settings, rebuild=rebuild,
                             embedder=self.embedder())
        if self._searcher is not None:
            self.reload()
        return refresh, report

    def index_exists(self) -> bool:
        from index.vectors import MANIFEST_FILE

        return (self.settings.index_dir / MANIFEST_FILE).exists()

    def prepare(self) -> str:
        """Make sure an index exists so the app comes up offline, then load it (the first question is quick):
        the stored chunks if there are any (after replaying configured archives when nothing was ingested
        yet), else one catalog card per resource. Returns what was done, for the log."""
        what = "index found"
        if not self.index_exists():
            if self.settings.crawl.warcs and not self.settings.store_file.exists():
                offline = self.settings.crawl.model_copy(update={"offline": True})
                replay = Guide(self.settings.model_copy(update={"crawl": offline}), self.resources, self._embedder)
                result = replay.ingest()
                log.info("first start: replayed %d archive(s): %d pages", len(self.settings.crawl.warcs),
                         result.documents)
            # The cards go into the store too, so crawled batches and `gpuguide index` add to them later.
            self.refresh_cards()
            chunks = self.stored_chunks()
            ingested = self.last_report() is not None
            what = (f"index built from {len(chunks)} stored chunks" if ingested
                    else f"index built from {len(chunks)} catalog cards (no pages ingested yet)")
            from index.build import build_index

            build_index(chunks, self.resources, self.settings, embedder=self.embedder())
        self.assistant()
        return what

    # --- loading -----------------------------------------------------------------------------------

    def embedder(self) -> Any:
        if self._embedder is None:
            from index.embed import Embedder

            self._embedder = Embedder(self.settings)
        return self._embedder

    def searcher(self) -> Searcher:
        """The loaded index (BM25, vectors, reranker, scope model); loaded once."""
        with self._lock:
            if self._searcher is None:
                from index.search import load_searcher

                self._searcher = load_searcher(self.settings, embedder=self.embedder())
            return self._searcher

    def assistant(self) -> Assistant:
        """The answer chain over the loaded index (assistant/chain.py); built once per loaded index."""
        searcher = self.searcher()
        with self._lock:
            if self._assistant is None or self._assistant.searcher is not searcher:
                from assistant.chain import Assistant

                self._assistant = Assistant(self.settings, searcher, resources=self.resources, profile=self.profile)
            return self._assistant

    def reload(self) -> None:
        """Load the index on disk and swap it in; readers holding the old one finish with it."""
        from assistant.chain import Assistant
        from index.search import load_searcher

        searcher = load_searcher(self.settings, embedder=self.embedder())
        assistant = Assistant(self.settings, searcher, resources=self.resources, profile=self.profile)
        with self._lock:
            self._searcher, self._assistant = searcher, assistant

    def indexed_chunks(self) -> int:
        return len(self.searcher().chunks)

    def warm_up(self) -> None:
        """Pay the lazy loads (embedding model, reranker, scope vocabulary; the packaged LLM when it is the
        backend) on a background thread after the server is up, so neither the URL nor the first answer waits."""
        try:
            self.assistant().searcher.search("GPU memory bandwidth", k=1)
            if self.settings.llm.backend == "embedded":
                from assistant.llm import embedded_llm

                embedded_llm(self.settings).warm()  # load the model and its saved prompt prefix
            log.info("warmed up")
        except Exception as exc:  # only a head start: a real question reports any problem itself
            log.warning("warm-up failed: %s", exc)

    # --- search ------------------------------------------------------------------------------------

    def search(self, query: str, k: int = 5, *, mode: str = "hybrid+rerank", tier: int | None = None,
               topic: str | None = None, kind: str | None = None, unread_only: bool = False) -> list[ResourceHit]:
        """Hybrid search (no LLM); filters narrow it, `unread_only` leaves out what the learner marked read."""
        exclude = self.read_ids() if unread_only else None
        return self.searcher().search(query, k=k, mode=mode, tier=tier, topic=topic or None, kind=kind or None,
                                      exclude_read=exclude)

    def outcome(self, query: str, hits: list[ResourceHit]) -> str:
        """"answer", "weak" or "out_of_scope" for these hits (search never refuses: it labels what it shows)."""
        return self.searcher().outcome(query, hits) if hits else "out_of_scope"

    def scope(self, query: str, hits: list[ResourceHit]) -> float:
        return self.searcher().scope_probability(query, hits) if hits else 0.0

    # --- answers: one routing decision, then one path ----------------------------------------------

    def route(self, query: Query) -> RouteDecision:
        """The one decision of a chat question: the reading planner's ("next") or search's. A follow-up is
        decided on what it asks in context ("more on [2]" is no reading-plan request)."""
        from assistant.conversation import resolve

        assistant = self.assistant()
        resolved = resolve(query.question, query.history, assistant.vocabulary if query.history else None)
        return assistant.next_reads.decide(resolved.standalone if resolved.followup else query.question)

    def stream(self, query: Query) -> Iterator[AnswerEvent]:
        """Sources, then (with an LLM) the draft's tokens, then the verified answer (assistant/chain.py);
        a request for reading advice is the planner's answer instead, with the profile's states."""
        from assistant.chain import AnswerEvent

        query = replace(query, question=_clean(query.question))
        decision = self.route(query)
        if decision.route == "next":
            answer = self._planned(query)
            yield AnswerEvent("sources", answer)
            yield AnswerEvent("final", answer)
            return
        yield from self.assistant().stream(replace(query, route="search"))

    def ask(self, query: Query) -> Answer:
        from assistant.chain import final_answer

        return final_answer(self.stream(query))

    def _planned(self, query: Query) -> Answer:
        # Resources the question names count as read for this plan; the profile changes only through
        # `read add`, the Guide's checkboxes or the answer's "add these to my reads".
        states = self.states()
        read = {i for i, st in states.items() if st == "read"}
        return self.assistant().next_reads.answer(query.question, read, k=max(query.k, 3), states=states)

    # --- reading state, path, next reads -------------------------------------------------------------

    def states(self) -> dict[str, str]:
        """Reading states by id (unread resources are absent)."""
        return self.profile.states()

    def read_ids(self) -> set[str]:
        return self.profile.read_ids()

    def set_state(self, ids: Iterable[str], state: str) -> bool:
        """Only catalog ids and known states are stored; anything else (a stale page, a forged event) is
        logged and ignored. True when something was stored."""
        from assistant.profile import STATES

        known = {r.id for r in self.resources}
        ids = list(ids)
        keep = [i for i in ids if i in known]
        if state not in STATES or len(keep) < len(ids):
            log.warning("ignoring state %r for resource ids %r", state[:20], [i[:80] for i in ids if i not in known])
        if state not in STATES or not keep:
            return False
        self.profile.set_state(keep, state)
        return True

    def set_read(self, resource_id: str, read: bool) -> bool:
        return self.set_state([resource_id], "read" if read else "unread")

    def times(self) -> dict[str, Estimate]:
        """Reading time per resource from the loaded index's chunks, else the store's (recomputed per index)."""
        from assistant.readtime import estimate_all, stored_chunks, stored_continuations

        chunks = self._searcher.chunks if self._searcher is not None else None
        if chunks is None:
            return estimate_all(self.resources, stored_chunks(self.settings), self.settings.learning,
                                stored_continuations(self.settings))
        if self._times is None or self._times[0] is not chunks:
            self._times = (chunks, estimate_all(self.resources, chunks, self.settings.learning,
                                                stored_continuations(self.settings)))
        return self._times[1]

    def learning_path(self) -> LearningPath:
        from assistant.path import learning_path

        return learning_path(self.resources, self.states(), self.times())

    def progress(self) -> list[ProgressRow]:
        from assistant.status import progress_rows

        return progress_rows(self.resources, self.read_ids())

    def plan(self, interest: str = "", k: int = 5, read: Iterable[str] = (),
             states: dict[str, str] | None = None) -> NextPlan:
        """What to read next (assistant/planner.py) with `planner.focus_threshold`: `read` are references
        (ids, URLs or free text such as "the Tier 1 profiling material") counted as read for this plan only;
        `states` default to the profile's (reading first; read and skipped never picked)."""
        from assistant.planner import plan_next
        from assistant.reading import resolve_reads

        said = resolve_reads(list(read), self.resources)
        states = self.states() if states is None else states
        read_ids = {i for i, st in states.items() if st == "read"} | said
        plan = plan_next(self.resources, read_ids, interest=interest, k=k,
                         focus_threshold=self.settings.planner.focus_threshold,
                         reading_ids={i for i, st in states.items() if st == "reading"},
                         skipped_ids={i for i, st in states.items() if st == "skipped"})
        return NextPlan(plan, said, read_ids)

    # --- summaries and self-checks ---------------------------------------------------------------------

    def digest_maker(self) -> DigestMaker:
        """Summaries and self-checks over the loaded index's chunks (else the store's) and the embedder."""
        from assistant.digest import DigestMaker
        from assistant.readtime import stored_chunks

        chunks = self._searcher.chunks if self._searcher is not None else stored_chunks(self.settings)
        if self._digests is None or self._digests.source is not chunks:
            self._digests = DigestMaker(self.settings, self.resources, chunks, self.embedder())
        return self._digests

    def digest(self, ref: str, kind: str, refresh: bool = False) -> Digest:
        """The `summary` or `self-check` of one resource, from its own text; cached on disk."""
        return self.digest_maker().digest(self.resolve(ref).id, kind, refresh=refresh)

    def summary(self, ref: str, refresh: bool = False) -> Digest:
        return self.digest(ref, "summary", refresh)

    def self_check(self, ref: str, refresh: bool = False) -> Digest:
        return self.digest(ref, "self-check", refresh)

    # --- export ----------------------------------------------------------------------------------------

    def export(self, markdown: Path | None = None, anki: Path | None = None, make_missing: bool = False) -> Exported:
        """The path as a Markdown checklist and the self-checks made so far as Anki CSV, written atomically;
        `make_missing` first makes the self-checks of resources being read or read."""
        from assistant.export import anki_csv, path_markdown
        from core.files import atomic_write_text

        out = Exported()
        if markdown is not None:
            path = self.learning_path()
            atomic_write_text(markdown, path_markdown(path, self.settings.catalog.list_url))
            out.path_summary = path.summary()
        if anki is not None:
            from assistant.digest import SELF_CHECK

            maker = self.digest_maker()
            states = self.states()
            digests = []
            for res in sorted(self.resources, key=lambda r: r.position):
                made = maker.cached(res.id, SELF_CHECK, any_backend=True)
                if made is None and make_missing and states.get(res.id) in ("reading", "read"):
                    made = maker.digest(res.id, SELF_CHECK)
                if made is not None and made.questions:
                    digests.append(made)
            atomic_write_text(anki, anki_csv(digests))
            out.questions, out.resources = sum(len(d.questions) for d in digests), len(digests)
        return out

    # --- status and background jobs --------------------------------------------------------------------

    def status(self) -> IndexStatus:
        from assistant.status import index_status

        return index_status(self.settings, self.resources, self.searcher())

    @property
    def job(self) -> IngestJob:
        return self.jobs.job

    def start_reingest(self) -> bool:
        """Crawl and re-index in the background; False if a job is running."""
        job = IngestJob(phase="ingesting", started=time.time(), message="crawling and extracting pages")
        return self.jobs.start(job, lambda j: reingest(self, j))

    def start_update(self, kind: str = "update") -> bool:
        """Cards and index in line with the list, then a crawl of what waits, in batches; False if a job runs."""
        job = IngestJob(phase="indexing", kind=kind, started=time.time(),
                        message="bringing the cards in line with the list")
        return self.jobs.start(job, lambda j: update(self, j))

    def start_first_crawl(self) -> bool:
        """`gpuguide serve` on a data dir no crawl has touched: crawl the list in the background (the catalog
        cards answer meanwhile). Off with `ui.first_start_crawl`; configured archives are replayed instead."""
        if not self.settings.ui.first_start_crawl or self.settings.crawl.warcs or self.last_report() is not None:
            return False
        return self.start_update(kind="first start")

    def start_list_update(self) -> bool:
        """At start: a list synced while the app was stopped is applied now, in the background."""
        from ingest.refresh import cards_out_of_date

        return cards_out_of_date(self.settings, self.resources) and self.start_update(kind="list update")

    def wait_job(self, timeout: float | None = None) -> IngestJob:
        return self.jobs.wait(timeout)


def _clean(question: str) -> str:
    """Control characters out, whitespace folded, length capped, as the answer chain reads it."""
    question = "".join(ch for ch in question if ch.isprintable() or ch in "\n\t")
    return re.sub(r"\s+", " ", question).strip()[:MAX_QUESTION_CHARS]
