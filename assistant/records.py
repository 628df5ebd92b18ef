"""What the assistant hands back: an answer, its numbered citations, and where each sits in the list."""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant.fragments import cite_link
from core.records import place_label


@dataclass
class Citation:
    """Source [n] of an answer, traceable to its passage and to its place in the tiered list."""

    n: int
    resource_id: str
    title: str
    url: str
    topic: str
    section: str
    tier: int | None
    list_url: str
    passage: str
    score: float
    kind: str = ""
    cited: bool = True  # False: shown while the model wrote, not cited by the final answer (kept, never hidden)
    quote: str = ""  # the page sentence that supports the answer (the link's text fragment)
    page: int | None = None  # PDF page of the quote, when known
    read: bool = False  # the learner marked this resource read
    source_url: str = ""  # the page the passage and quote come from, when not `url` (an arXiv PDF, a later part)
    page_text: bool = True  # False: the passage is the catalog card, not page text (no sentence to point at)

    @property
    def place(self) -> str:
        return place_label(self.topic, self.section, self.tier)

    @property
    def link(self) -> str:
        """The source link: the page scrolled to the supporting sentence (a text fragment of `quote`, else of
        the passage's first sentence), a PDF at its `page`; the plain URL when there is no page text."""
        url = self.source_url or self.url
        if not self.page_text:
            return url
        return cite_link(url, self.quote, self.passage, self.page)


@dataclass
class Dropped:
    """A generated sentence left out of the answer because verification could not support it."""

    text: str
    reason: str


@dataclass
class Answer:
    """`route` is `search` (answered from passages), `next` (reading planner) or `abstain`."""

    text: str
    citations: list[Citation]
    abstained: bool
    route: str
    question: str = ""
    standalone_question: str = ""
    backend: str = ""
    fallback: str = ""  # why a configured LLM was not used (it failed, or its answer was unsupported)
    nearest_topics: list[str] = field(default_factory=list)
    weak: bool = False  # retrieval found only a weak match: the answer is shown with a note saying so
    dropped: list[Dropped] = field(default_factory=list)  # generated sentences verification removed
    draft: str = ""  # the model's raw text, when it was generated (kept for inspection, never rendered as the answer)
    redraft: str = ""  # the second draft's raw text, when the first held nothing (chain.py `llm.redraft_tokens`)
    read_ids: list[str] = field(default_factory=list)  # `next`: resources the question says were read, not yet in the profile
    focus_topics: list[str] = field(default_factory=list)  # `next`: the topics the question asks about
