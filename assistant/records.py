"""What the assistant hands back: an answer, its numbered citations, and where each sits in the list."""

from __future__ import annotations

from dataclasses import dataclass, field

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

    @property
    def place(self) -> str:
        return place_label(self.topic, self.section, self.tier)


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
    read_ids: list[str] = field(default_factory=list)  # `next`: resources the question says were read, not yet in the profile
    focus_topics: list[str] = field(default_factory=list)  # `next`: the topics the question asks about
