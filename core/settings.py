"""The one settings object: defaults → `gpuguide.toml` in the data dir → `GPUGUIDE_*` env → CLI flags.

It lives in `core`, the neutral package every stage (ingest, index, assistant, ui) imports and that imports none of them.
Nested groups are set from the environment with a double underscore, e.g.
`GPUGUIDE_CRAWL__CONCURRENCY=4`; in the TOML file as tables (`[crawl]`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, get_args

from platformdirs import user_cache_dir, user_data_dir
from pydantic import AliasChoices, BaseModel, Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core.errors import UserError
from core.files import atomic_write_text

CONFIG_FILE_NAME = "gpuguide.toml"


class SettingsError(UserError):
    """A setting is invalid; the message is one line that names it."""


class CatalogSettings(BaseModel):
    source: str | None = Field(None, description="Markdown list to use instead of the bundled/synced catalog")
    list_url: str = Field(
        "https://github.com/wafer-ai/gpu-perf-engineering-resources",
        description="Where the tiered list is published; citations link to its section anchors",
    )
    max_shrink: float = Field(0.5, description="`catalog sync` refuses a list that lost more than this share of entries")
    upstream_url: str = Field(
        "https://raw.githubusercontent.com/wafer-ai/gpu-perf-engineering-resources/main/README.md",
        description="The list's raw markdown upstream; `gpuguide catalog sync` with no --from fetches it",
    )


class CrawlSettings(BaseModel):
    user_agent: str = "gpuguide/0.1 (+local study assistant; polite crawler)"
    concurrency: int = Field(8, ge=1)
    per_host_concurrency: int = Field(2, ge=1)
    host_delay_s: float = Field(1.0, ge=0)
    connect_timeout_s: float = Field(10.0, gt=0)
    read_timeout_s: float = Field(30.0, gt=0)
    retries: int = Field(3, ge=0)
    backoff_s: float = Field(0.5, ge=0, description="First retry delay; doubles each retry")
    max_retry_after_s: float = Field(60.0, ge=0)
    max_redirects: int = Field(5, ge=0)
    max_body_bytes: int = Field(20_000_000, gt=0)
    allow_private_hosts: bool = Field(False, description="Allow loopback/private/link-local hosts (tests only)")
    allowed_private_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, addresses or CIDR networks allowed even though not public (e.g. 127.0.0.1 in tests)",
    )
    total_timeout_s: float = Field(120.0, gt=0, description="Wall-clock limit for one request, body included")
    respect_robots: bool = True
    url_rewrites: dict[str, str] = Field(
        default_factory=dict, description="URL prefix → replacement, applied before fetching"
    )
    follow_depth: int = Field(0, ge=0, le=1, description="Follow same-site links of multi-part posts")
    same_site: bool = True
    follow_arxiv_pdf: bool = True
    follow_github_readme: bool = True
    offline: bool = False
    warcs: list[Path] = Field(default_factory=list, description="Archives replayed in offline mode")


class ChunkSettings(BaseModel):
    target_words: int = Field(165, ge=20)
    overlap_words: int = Field(30, ge=0)
    near_duplicate_threshold: float = Field(0.9, gt=0, le=1)
    min_chunk_words: int = Field(40, ge=0, description="A smaller chunk is merged with the next section's")
    min_document_words: int = Field(15, ge=0, description="Pages with less extracted text are skipped")
    max_pdf_pages: int = Field(500, ge=1, description="Only this many pages of a PDF are read")
    max_wordpieces: int = Field(
        256, ge=0,
        description="Estimated word-pieces of context header + chunk the embedder reads; 0: count words only",
    )
    card_inlinks: int = Field(
        8, ge=0,
        description="A resource with no page text gets up to this many links' anchor and sentence from crawled "
        "pages that link to it on its card chunk (ingest/inlinks.py); 0: off",
    )
    card_neighbours: int = Field(
        0, ge=0, description="... and the titles and notes of this many list entries on each side in its section",
    )


class EmbedSettings(BaseModel):
    model_path: str | None = Field(None, description="Local sentence-transformers folder; default: packaged MiniLM")
    device: str = Field("auto", description="auto / cpu / cuda / mps")
    batch_size: int = Field(64, ge=1)
    gpu_batch_size: int = Field(
        2048, ge=1,
        description="Batch size on CUDA (texts are sorted by length, so big batches pad little; 512-4096 measured "
        "on an H200 in docs/benchmarks.md)",
    )
    gpu_fp16: bool = Field(True, description="Run the model in float16 on CUDA (vectors within 1e-2 cosine of the CPU's)")
    gpu_prefetch: int = Field(
        4, ge=1, description="Batches tokenized ahead on CPU threads while the GPU runs the current one"
    )
    gpu_tokenize_processes: int | None = Field(
        None, ge=0,
        description="Worker processes that tokenize for the GPU on big jobs: unset = one per CPU core but one; "
        "0 = threads only (index/gpu_tokenizer.py says why processes keep up and threads do not)",
    )
    gpu_processes_from: int = Field(
        120_000, ge=1, description="Texts in one job from which the GPU path tokenizes in worker processes "
        "(their start costs about 2 s; on an H200 machine they gain about 12% at 200k texts, so they pay from "
        "about 120k: docs/benchmarks.md)",
    )
    cache_file: Path | None = Field(
        None, description="SQLite cache of embeddings by content hash; default: embeddings.sqlite3 in the data dir"
    )
    query_int8: bool = Field(
        True,
        description="On the CPU, embed queries (not documents) with an int8 copy of the model: one query reads "
        "the model's weights once, so 4x fewer weight bytes is about 3x faster (docs/search.md has the numbers)",
    )


# Fitted defaults: tools/tune_retrieval.py (ranking knobs) and tools/calibrate_scope.py (the scope model, a
# logistic model over evidence from a search's whole result list, and its thresholds) write core/data/fitted.json
# with `--write-fitted`; their JSON reports, with the folds and data they used, are under docs/measurements/.
FITTED_FILE = Path(__file__).resolve().parent / "data" / "fitted.json"


def _load_fitted(path: Path = FITTED_FILE) -> dict[str, Any]:
    """The `index.*` defaults the fitting scripts wrote (one file, so no value is copied by hand)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for section in data.values() for name, value in section["index"].items()}


def write_fitted(section: str, values: dict[str, Any], written_by: str, path: Path = FITTED_FILE) -> None:
    """Replace one section ("retrieval" or "scope") of the fitted defaults, atomically (a fitting script's output)."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[section] = {"written_by": written_by, "index": values}
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")


FITTED: dict[str, Any] = _load_fitted()
DEFAULT_SCOPE_WEIGHTS: dict[str, float] = dict(FITTED["scope_weights"])


class IndexSettings(BaseModel):
    hnsw_threshold: int = Field(50_000, ge=1, description="Use HNSW above this many chunks, exact search below")
    hnsw_m: int = 32
    hnsw_ef_search: int = 128
    hnsw_ef_construction: int = 200
    # Fusion and ranking knobs: chosen by grouped 5-fold cross-validation on the synthetic questions
    # (tools/tune_retrieval.py → core/data/fitted.json, docs/measurements/retrieval_tuning.json); never on the dev set.
    rrf_k: int = Field(
        FITTED["rrf_k"], ge=0, description="RRF constant: score += weight / (rrf_k + rank); small k trusts each list's top ranks"
    )
    dense_weight: float = Field(FITTED["dense_weight"], ge=0, description="RRF weight of the dense ranking")
    bm25_weight: float = Field(
        FITTED["bm25_weight"], ge=0, description="RRF weight of the BM25 ranking"
    )
    candidates: int = 50
    passages_per_resource: int = 3
    rerank_model_path: str | None = Field(None, description="CrossEncoder folder; default: built-in reranker")
    fusion_passages: int = Field(
        FITTED["fusion_passages"], ge=1, description="Passages per resource that add to its score (1: best only)"
    )
    fusion_decay: float = Field(
        FITTED["fusion_decay"], ge=0, le=1, description="Weight of a resource's n-th passage is decay^(n-1) (0: best passage only)"
    )
    expansion_weight: float = Field(
        FITTED["expansion_weight"], ge=0, description="BM25 weight of the corpus's short/long forms of the query's words (index/aliases.py); "
        "0: off (the reranker still reads them)",
    )
    dense_expansion: bool = Field(
        FITTED["dense_expansion"], description="Also append those forms to the query the embedder reads"
    )
    typo_correction: bool = Field(
        True, description="Rewrite misspelt query words into the corpus's spelling (kept on: the synthetic questions "
        "have no typos to measure the gain, and it changed 3 of 564 of them for +0.003 MRR@10)",
    )
    typo_min_len: int = Field(5, ge=3, description="Shorter words are never corrected")
    rerank_title: float = Field(FITTED["rerank_title"], ge=0, description="Reranker: weight of the query's words in a title (CV)")
    rerank_identifiers: float = Field(
        FITTED["rerank_identifiers"], ge=0, description="Reranker: weight of GPU identifiers in title or note"
    )
    rerank_named: float = Field(
        0.1, ge=0, description="Reranker: weight of a catalog name (author, site) in the query (not tuned: the "
        "synthetic questions never name authors; 0 and 0.1 differ by 0.0004 MRR@10 on them)",
    )
    abstain_threshold: float = Field(
        FITTED["abstain_threshold"],
        ge=0,
        le=1,
        description="Out of scope (the only refusal) when the scope model's probability that the guide covers the "
        "question is below this; chosen by tools/calibrate_scope.py on held-out folds of our own questions",
    )
    weak_threshold: float = Field(
        FITTED["weak_threshold"],
        ge=0,
        le=1,
        description="Answered but marked a weak match when the scope probability is below this (and not out of "
        "scope); chosen by tools/calibrate_scope.py on held-out folds of our own questions",
    )
    scope_weights: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SCOPE_WEIGHTS),
        description="Log-odds weight of each scope feature (index/scope.py SCOPE_FEATURES); fitted by "
        "tools/calibrate_scope.py on synthetic in-scope and our own out-of-scope questions",
    )
    scope_intercept: float = Field(FITTED["scope_intercept"], description="The scope model's intercept (fitted with scope_weights)")
    search_threads: int = Field(1, ge=1, description="FAISS/OpenMP threads for one query (1 is fastest here)")


# The answer backends `llm.backend` accepts, defined here once (assistant/backend_status.py and the app list these).
LLMBackend = Literal["embedded", "extractive", "ollama", "openai"]
LLM_BACKENDS: tuple[str, ...] = get_args(LLMBackend)


class LLMSettings(BaseModel):
    backend: LLMBackend = "embedded"
    model_path: str | None = Field(None, description="GGUF file; default: assembled packaged Qwen2.5-Coder-1.5B")
    context_tokens: int = 2048
    max_tokens: int = Field(
        150, ge=16, description="Answer length cap in tokens: no sentence starts past it, the one being written may "
        "finish within finish_sentence_tokens (embedded model), and one still unfinished then is dropped, not shown"
    )
    finish_sentence_tokens: int = Field(
        40, ge=0,
        description="The embedded model may finish the sentence it is writing at max_tokens within this many more "
        "tokens, so a long last sentence is kept whole instead of dropped (0: cut at max_tokens)",
    )
    temperature: float = 0.0
    threads: int | None = Field(
        None, ge=1,
        description="llama.cpp threads; default: the CPU cores not busy with other work when the model loads "
        "(threads spinning on cores another job uses slow each other down many times over)",
    )
    batch_tokens: int = Field(512, ge=32, description="llama.cpp prompt batch (n_batch)")
    generation_nice: int = Field(
        5, ge=0, le=19,
        description="The embedded model generates at this many nice steps below the app's other work, so a long "
        "generation never slows retrieval and extractive answers for CPU (0: same priority)",
    )
    gpu_layers: int | None = Field(
        None, ge=-1,
        description="Model layers llama.cpp offloads to the GPU (n_gpu_layers): unset = all of them when "
        "llama-cpp-python is a GPU build and sees a GPU ('make install-gpu'), else 0; -1 = all; 0 = CPU only",
    )
    weight_repack: bool | None = Field(
        None,
        description="llama.cpp's repacked CPU weight layouts (use_extra_bufts): unset = off where llama.cpp runs "
        "AVX-512 kernels on the CPU (there the weights as stored read prompts 1.4x faster: 119 against 84 tokens/s "
        "on 2 cores), on elsewhere (the AVX2 build writes 12 % faster with it) and for a model on the GPU",
    )
    prompt_cache: bool = Field(
        True, description="Keep the evaluated fixed prompt prefix in memory and on disk (the model cache's prompt-cache/)"
    )
    separate_process: bool | None = Field(
        None,
        description="Run the embedded model in a process of its own: unset = on a GPU build of llama-cpp-python "
        "(CUDA llama.cpp crashed sharing a process with numpy and torch on the H200 machine; a crash there "
        "never stops the app), else in the app's process",
    )
    answer_sentences: int = Field(
        5, ge=1, le=8,
        description="At most this many sentences of a generated answer are kept (the prompt asks for 2-4; each "
        "costs ~2 s of generation on 2 cores)",
    )
    evidence_resources: int = Field(
        5, ge=1, description="Top resources whose passages feed the evidence (5 since the native llama.cpp build "
        "reads ~650 tokens in the answer time; 3 at the ~390 of the portable build)")
    evidence_neighbours: bool = Field(
        False, description="Also read the chunks around each matched passage (no gain on the synthetic folds, "
        "twice the sentences to embed)",
    )
    evidence_tokens: int = Field(
        220, ge=40,
        description="Evidence budget in prompt tokens (titles included) while the backend's prompt speed is not "
        "yet measured; after that the budget follows the speed (answer_target_s, assistant/speed.py)",
    )
    evidence_tokens_min: int = Field(120, ge=40, description="The speed-based evidence budget never goes below this")
    evidence_tokens_max: int = Field(
        1400, ge=40, description="... nor above this (with the fixed prompt and the answer it must fit context_tokens)"
    )
    first_token_target_s: float = Field(
        2.5, gt=0,
        description="The first answer text comes within this many seconds of the question (lead_sentence); the "
        "evidence budget is at least what the backend reads in this time at its measured prompt speed (the whole "
        "budget until its writing speed is measured too)",
    )
    lead_sentence: bool = Field(
        True,
        description="When the whole evidence takes longer to read than first_token_target_s, the embedded model "
        "writes the first sentence from the start of the evidence alone, then reads the rest after it and goes on (its "
        "state is kept), so the first text comes within that target on 2 CPU cores",
    )
    answer_target_s: float = Field(
        14.0, gt=0,
        description="Once reading and writing speeds are measured, the evidence budget is what the backend reads in "
        "the time this target leaves after writing a typical answer, so the reading and writing take about this long "
        "(median answer ~13 s with retrieval, the check and second drafts on 2 CPU cores: the key points an answer "
        "covers grow with the evidence, so the target is as long as keeps the median clearly under 15 s, "
        "docs/benchmarks.md) and a GPU reads much more context; the sources and their passages are on screen "
        "before the model starts reading",
    )
    prompt_tokens_per_s: float | None = Field(
        None, gt=0,
        description="Prompt evaluation speed to plan the evidence budget with; unset = measured on each answer "
        "(remembered in the data dir), starting from evidence_tokens",
    )
    evidence_context_span: float = Field(
        1.0, ge=0,
        description="A picked sentence brings a neighbouring sentence whose relevance is within this of its own "
        "(the sentence before it always when it opens by referring back)",
    )
    evidence_max_sentences: int = Field(40, ge=1, description="At most this many evidence sentences (the budget binds first)")
    evidence_lexical_weight: float = Field(
        0.0, ge=0, description="Weight of question-term overlap next to cosine (the recall fit chose 0)")
    evidence_rank_weight: float = Field(0.3, ge=0, description="Prior for retrieval's order: weight / (1 + rank)")
    evidence_passage_weight: float = Field(
        0.7, ge=0, description="Prior for the sentence's chunk as retrieval scored it (fused BM25 and dense), "
        "relative to the best matched chunk: weight × score / best. At 390 tokens it raised the synthetic proxy but "
        "not the key points (0.42 both); in the 650-token fit with 5 resources it is part of the setting that did "
        "(0.482 → 0.536, docs/answers.md)")
    evidence_mmr_lambda: float = Field(
        1.0, gt=0, le=1,
        description="MMR: relevance vs. redundancy with picks (1 = relevance alone). The evidence knobs were chosen "
        "on synthetic folds 0-3 for the share of the question's own passage among the picks at a 650-token budget, "
        "see tools/tune_evidence.py and docs/measurements/evidence_tuning_recall_650_stop49.json",
    )
    evidence_relevance_span: float = Field(
        1.0, gt=0, description="Never pick a sentence whose relevance is this far below the best one's"
    )
    verify_min_cosine: float = Field(
        0.425, description="A generated sentence is supported when its cosine to an evidence sentence, pair or passage "
        "reaches this (fitted by tools/calibrate_verify.py on restated claims of known support, folds 0-3)"
    )
    verify_min_lexical: float = Field(
        0.2, description="... and at least this share of its new content words (not in the question) occur in the "
        "source's evidence or title (the fit chose 0.0; 0.2 keeps a guard against same-subject invention, which "
        "the calibration's negatives, claims from other resources, do not test)"
    )
    verify_question_word_max_share: float = Field(
        0.05, ge=0, le=1, description="Words of the question that a generated sentence uses and at most this share "
        "of the index's chunks hold must occur in the passage the sentence is attributed to (or its title); one such "
        "term English does not have, or two words, missing there and the sentence applies the question's subject to "
        "a passage about something else (tools/check_off_subject.py; 0 turns the check off)",
    )
    verify_resolve_references: bool = Field(
        True, description="A sentence that refers back to a dropped one names what it refers to in the question's "
        "words (\"It exploits ...\" → \"FlashAttention-3 exploits ...\"), or is dropped with it (assistant/"
        "antecedents.py; tools/check_off_subject.py score --toggle references)",
    )
    draft_tokens: int = Field(
        3, ge=0, le=32, description="The embedded model reads up to this many guessed tokens with each one it writes "
        "(the words that followed the same phrase in the prompt) and keeps those it would have written itself: its "
        "greedy answer (batched arithmetic can tip a near tie late in it), written faster when it quotes its passages "
        "(0: off; bench/draft_tokens.py)",
    )
    redraft_tokens: int = Field(
        200, ge=0, description="When no sentence of the model's answer holds against the passages, it writes a second "
        "draft from the most relevant passages alone, within this many tokens and half the evidence, checked the same "
        "way; the pointer answer only when that fails too (0: no second draft; assistant/chain.py)",
    )
    answer_min_cosine: float = Field(
        0.25, description="Below this cosine between the question and its closest evidence sentence the passages are "
        "not about the question: no answer is written from them, the answer points at the guide's resources (below "
        "the 1st percentile, 0.263, of answerable synthetic questions on held-out fold 4)"
    )
    pointer_min_cosine: float = Field(
        0.5, description="When no generated sentence holds, the closest passage is quoted beside the pointers only "
        "when its cosine to the question reaches this"
    )
    card_first_quote_min_cosine: float = Field(
        0.7, description="When the best match is known only by its catalog card, the closest page-text passage of the "
        "resources listed with it is quoted beside the pointers only when its cosine to the question reaches this: "
        "over the 29 showcase and synthetic questions that take this path, the quotes at 0.70 or above were on the "
        "question (E4M3 vs E5M2, arithmetic intensity in the roofline plot), those below mostly were not"
    )
    key_passage: bool = Field(
        True, description="After the model's checked sentences, quote the evidence sentence most relevant to the "
        "question when none of them says what it says (Verifier.key_passage): the page's own words carry the fact a "
        "1.5B model's paraphrase often leaves out"
    )
    key_passage_min_cosine: float = Field(
        0.5, description="... only when that sentence's cosine to the question reaches this"
    )
    key_passage_covered_cosine: float = Field(
        0.7, description="... and no kept sentence reaches this cosine to it (a sentence that does already says it)"
    )
    ollama_url: str = "http://127.0.0.1:11434"
    ollama_model: str = "qwen2.5-coder:1.5b"
    openai_base_url: str = "http://127.0.0.1:8080/v1"
    openai_model: str = "local"
    openai_api_key: str = "not-needed"
    timeout_s: float = 120.0


class LearningSettings(BaseModel):
    """The learning path: reading time per resource (assistant/readtime.py) and summaries/self-checks
    (assistant/digest.py)."""

    words_per_minute: int = Field(
        200, ge=20, description="Reading pace for prose pages (blogs, docs, READMEs): technical text reads slower "
        "than the ~240 words/min of general prose",
    )
    paper_words_per_minute: int = Field(
        100, ge=10, description="Reading pace for a paper's full text (PDF): dense, with figures and equations"
    )
    paper_abstract_only_minutes: int = Field(
        60, ge=0, description="A paper whose full text was not extracted (only its abstract page): this many "
        "minutes, the time a careful first read of a typical 10-page paper takes; 0: unknown",
    )
    repo_extra_minutes: int = Field(
        15, ge=0, description="A repository: its README at words_per_minute plus this many minutes to look "
        "through the code it points at",
    )
    unknown_kinds: list[str] = Field(
        default_factory=lambda: ["video", "book", "community"],
        description="Kinds whose extracted page says nothing of the work's length (a talk's page, a book's "
        "landing page, a forum): their time is unknown rather than guessed",
    )
    summary_points: int = Field(3, ge=1, le=6, description="Key points in a resource's summary")
    self_check_questions: int = Field(
        3, ge=1, le=6, description="Self-check questions per resource",
        validation_alias=AliasChoices("self_check_questions", "quiz_questions"),  # its old name, still read
    )
    digest_evidence_tokens: int = Field(
        320, ge=60, description="Token budget of the resource's passages shown to the model for a summary or "
        "self-check (prompt speed ~47 tokens/s on 2 cores)",
    )
    digest_max_tokens: int = Field(
        200, ge=32, description="Generation cap for a summary or self-check (each ~2 s per sentence on 2 cores)"
    )
    digest_backend: Literal["embedded", "extractive"] = Field(
        "embedded", description="embedded: the packaged model writes summaries and questions (verified against "
        "the passages, extractive when nothing survives); extractive: top sentences and fill-in-the-blank questions",
    )


class UISettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 7860
    auth_user: str | None = None
    auth_password: str | None = None
    first_start_crawl: bool = Field(
        True,
        description="`gpuguide serve` on a data dir that was never crawled starts crawling the list in the background "
        "when the network is reachable (the catalog cards answer meanwhile); false: only the re-ingest button crawls",
    )
    crawl_batch: int = Field(
        12, ge=1, description="The app's background crawl stores and indexes pages after every this many resources",
    )
    backend_probe_s: float = Field(
        0.5, gt=0, le=10,
        description="How long the Settings panel waits for an Ollama / OpenAI-compatible server to answer before "
        "it shows that backend as unavailable (assistant/backend_status.py)",
    )
    chat_concurrency: int = Field(
        16, ge=1,
        description="Chat turns and API calls handled at once; only the embedded model's generation runs one at a "
        "time (a lock inside the backend), so extractive answers, search and the planner never wait behind it",
    )


class PlannerSettings(BaseModel):
    """The reading planner (assistant/planner.py, reading.py, route.py)."""

    route_weights: dict[str, float] = Field(
        default_factory=lambda: {"intent": 1.524, "request": 2.578, "history": 1.807, "concept": -1.849},
        description="Log-odds weight of each routing feature (assistant/route.py FEATURES); fitted by "
        "bench/next_reads.py --calibrate on our own written questions",
    )
    route_intercept: float = Field(-1.473, description="The routing model's intercept (fitted with route_weights)")
    route_threshold: float = Field(0.5, ge=0, le=1, description="A question goes to the planner when P(next) >= this")
    focus_threshold: float = Field(
        0.5, ge=0, le=1, description="A topic the question points at with at least this share of the top score is a focus"
    )


def default_home() -> Path:
    return Path(user_data_dir("gpuguide", appauthor=False))


def default_model_cache() -> Path:
    """Outside any data dir: the 1.1 GB packaged model is assembled once per user, not once per data dir."""
    return Path(user_cache_dir("gpuguide", appauthor=False)) / "models"


class Settings(BaseSettings):
    """Everything configurable. Every later stage adds its options as a group here."""

    model_config = SettingsConfigDict(
        env_prefix="GPUGUIDE_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    home: Path = Field(default_factory=default_home, description="Data dir (GPUGUIDE_HOME)")
    model_cache: Path = Field(
        default_factory=default_model_cache,
        description="Shared cache of model files every data dir uses (GPUGUIDE_MODEL_CACHE): the assembled packaged "
        "GGUF as <sha256>.gguf and the evaluated prompt prefixes; a data dir holds only its own data",
    )
    catalog: CatalogSettings = Field(default_factory=CatalogSettings)
    crawl: CrawlSettings = Field(default_factory=CrawlSettings)
    chunk: ChunkSettings = Field(default_factory=ChunkSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    planner: PlannerSettings = Field(default_factory=PlannerSettings)
    learning: LearningSettings = Field(default_factory=LearningSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    ui: UISettings = Field(default_factory=UISettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: CLI flags (init kwargs) → environment → the TOML file in the data dir.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=_config_path()))

    # Paths inside the data dir, named once here so no stage invents its own.
    @property
    def config_file(self) -> Path:
        return self.home / CONFIG_FILE_NAME

    @property
    def catalog_file(self) -> Path:
        return self.home / "catalog.json"

    @property
    def archive_dir(self) -> Path:
        return self.home / "archive"

    @property
    def store_file(self) -> Path:
        return self.home / "store.sqlite3"

    @property
    def inlinks_file(self) -> Path:
        """Outgoing links of the crawled pages (ingest/inlinks.py), for card-only resources' cards."""
        return self.home / "inlinks.json"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def profile_file(self) -> Path:
        return self.home / "profile.sqlite3"

    @property
    def digests_dir(self) -> Path:
        return self.home / "digests"

    @property
    def prompt_speed_file(self) -> Path:
        return self.home / "prompt-speed.json"


def _config_path() -> Path:
    home = os.environ.get("GPUGUIDE_HOME")
    return (Path(home).expanduser() if home else default_home()) / CONFIG_FILE_NAME


def load_settings(**overrides: Any) -> Settings:
    """Build the effective settings; `overrides` are CLI flags (nested groups as dicts).

    Raises SettingsError with one line naming the bad setting and its source.
    """
    home = overrides.get("home")
    if home is not None:
        # The data dir decides where the config file is, so a --home flag must be seen first.
        os.environ["GPUGUIDE_HOME"] = str(home)
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise SettingsError(
            f"invalid setting {where!r}: {err['msg']} (check {_config_path()}, GPUGUIDE_* env and flags)"
        ) from None
    except (OSError, ValueError) as exc:  # e.g. a malformed TOML file
        raise SettingsError(f"cannot read settings from {_config_path()}: {exc}") from None
