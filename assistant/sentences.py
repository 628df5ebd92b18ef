"""Sentence-level text tools shared by the extractive answerer, the prompt builder and the verifier:
split passages into sentences, score them against a question, and tell a sentence that only announces what
came next on its page. Terms are the project's one tokenizer
(`core.text.tokenize`: stop words out, Snowball stems)."""

from __future__ import annotations

import math
import re
from collections import Counter

from core.text import tokenize

_ABBREV = re.compile(r"\b(e\.g|i\.e|et al|etc|vs|Fig|fig|approx|Dr|Mr|Ms|No)\.$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_FENCE = re.compile(r"```.*?```", re.DOTALL)
MARKERS = re.compile(r"((?:\s*\[\s*\d{1,3}\s*\])+)")  # a run of citation markers, "[1]" or " [2] [3]"


# Inline TeX as a page shows it (MathJax on arXiv abstracts): "1.1$\times$ speedup" reads "1.1× speedup". Only
# spans that come out as plain text are replaced; a formula (fractions, sums, anything left with a backslash
# or a brace) stays as written, and evidence leaves such sentences out.
_INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\n]{1,60}?)(?<!\\)\$(?!\$)")
_TEX_SYMBOLS = {
    "times": "×", "cdot": "·", "approx": "≈", "sim": "~", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥",
    "ll": "≪", "gg": "≫", "pm": "±", "to": "→", "rightarrow": "→", "infty": "∞", "mu": "μ", "alpha": "α",
    "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ", "lambda": "λ", "sigma": "σ",
    "tau": "τ", "phi": "φ", "pi": "π", "%": "%", "_": "_", ",": " ", ";": " ", "!": "", " ": " ",
}
_TEX_WRAPPERS = re.compile(r"\\(?:text|textrm|mathrm|mathit|mathbf|mathtt|operatorname)\s*\{([^{}\\]*)\}")
_TEX_MACRO = re.compile(r"\\([A-Za-z]+|[%_,;! ])")


def plain_math(text: str) -> str:
    """`text` with its simple inline TeX spans written as plain text ("$\\times$" → "×", "$O(n)$" → "O(n)")."""

    def plain(match: re.Match[str]) -> str:
        body = _TEX_WRAPPERS.sub(r"\1", match.group(1))
        body = _TEX_MACRO.sub(lambda m: _TEX_SYMBOLS.get(m.group(1), m.group(0)), body)
        if "\\" in body or "{" in body or "}" in body:
            return match.group(0)
        return " ".join(body.split())

    return _INLINE_MATH.sub(plain, text) if "$" in text else text


# English auxiliaries: a finite verb, where a sentence's subject ends
AUXILIARIES = frozenset({"is", "are", "was", "were", "be", "been", "has", "have", "had", "can", "could", "will", "would",
                         "may", "might", "must", "should", "does", "do", "did"})


def terms(text: str) -> list[str]:
    """The terms of `text` in order (core/text.py's tokenizer)."""
    return tokenize(text)


_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def table_sentence(header: list[str], row: list[str]) -> str:
    """A markdown table row as a sentence: its first cell, then the others under their column names ("Optimize
    LDS usage: Minimize LDS usage by ..." for a name | description table; "H100: Memory 80 GB; SMs 132")."""
    if len(row) < 2 or not row[0]:
        return ""
    values = [(h, v) for h, v in zip(header[1:], row[1:]) if v]
    if not values:
        return ""
    if len(values) == 1 and len(values[0][1].split()) >= 4:
        body = values[0][1]  # a description column: the column's name adds nothing
    else:
        body = "; ".join(f"{h} {v}" if h else v for h, v in values)
    text = f"{row[0]}: {body}"
    return text if text[-1] in ".!?" else text + "."


def _table_lines(raw: list[str]) -> dict[int, str]:
    """Line number → the sentence of that table row ("" for header rows, rules and rows of a table without a
    header rule, which say nothing readable)."""
    out: dict[int, str] = {}
    header: list[str] | None = None
    for i, line in enumerate(raw):
        stripped = line.strip()
        if not stripped.startswith("|"):
            header = None
            continue
        out[i] = ""
        if i + 1 < len(raw) and _TABLE_RULE.match(raw[i + 1].strip()):
            header = _cells(stripped)  # the header row: its names go with every row below
        elif header is not None and not _TABLE_RULE.match(stripped):
            out[i] = table_sentence(header, _cells(stripped))
    return out


def open_table_header(text: str) -> str:
    """The header row and rule of a table that runs to the end of `text` ("" when none does): the next chunk of
    the page, cut inside that table, needs its column names for its rows to read as sentences."""
    lines = [line.strip() for line in _FENCE.sub(" ", text).rstrip().splitlines()]
    for i in range(len(lines) - 1, -1, -1):
        if not lines[i].startswith("|"):
            return ""
        if i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]) and not _TABLE_RULE.match(lines[i]):
            return f"{lines[i]}\n{lines[i + 1]}"
    return ""


def starts_inside_table(text: str) -> bool:
    """A passage that opens with table rows but not with the table's header (its chunk was cut in a table)."""
    lines = text.strip().splitlines()
    return bool(lines) and lines[0].startswith("|") and not (len(lines) > 1 and _TABLE_RULE.match(lines[1].strip()))


def table_rows(text: str) -> set[str]:
    """The sentences that `sentences` makes of the text's table rows: each row is an item of its own."""
    return {row for row in _table_lines(_FENCE.sub(" ", text).splitlines()).values() if row}


def _split_at_ends(text: str) -> list[str]:
    """One line of text cut where a sentence ends, except after an abbreviation ("e.g.", "et al.")."""
    merged: list[str] = []
    for part in _SENTENCE_END.split(text):
        if merged and _ABBREV.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def prose_sentences(text: str) -> list[str]:
    """The sentences of plain prose with none of its words lost: a piece under 4 words that ends like a
    sentence ("Yes.") joins its neighbour; an unfinished last piece (text cut off mid-sentence) stays apart."""
    pieces = _split_at_ends(re.sub(r"\s+", " ", text).strip())
    out: list[str] = []
    for i, piece in enumerate(pieces):
        unfinished = i == len(pieces) - 1 and not piece.rstrip().endswith((".", "!", "?"))
        if len(piece.split()) < 4 and not unfinished and (out or i + 1 < len(pieces)):
            if out:
                out[-1] = f"{out[-1]} {piece}"
            else:
                pieces[i + 1] = f"{piece} {pieces[i + 1]}"
            continue
        out.append(piece)
    return [p for p in out if p.strip()]


def sentences(text: str) -> list[str]:
    """Prose sentences of a markdown passage, and the rows of its tables as sentences; code blocks, headings
    and link lists dropped."""
    text = _FENCE.sub(" ", text)
    raw = text.splitlines()
    rows = _table_lines(raw)
    lines = []
    for i, line in enumerate(raw):
        stripped = line.strip()
        if i in rows:
            lines += ["", rows[i], ""] if rows[i] else [""]
            continue
        if not stripped or stripped.startswith(("#", "![", "<")) or set(stripped) <= set("-=*_ "):
            lines.append("")
            continue
        lines.append(re.sub(r"^[-*+]\s+|^\d+[.)]\s+", "", stripped))
    out: list[str] = []
    for block in re.split(r"\n\s*\n", "\n".join(lines)):
        block = re.sub(r"\s+", " ", block).strip()
        if not block:
            continue
        out.extend(p.strip() for p in _split_at_ends(block) if len(p.split()) >= 4)
    return out


_CLOSED = re.compile(r"[.!?][\"')\]]?$")
_OPENS = re.compile(r"[A-Z0-9`\"'(\[]")


def starts_new_sentence(text: str, piece: str) -> bool:
    """Does `piece`, streamed after `text`, open a new sentence, so that `text` ends one? The same boundary
    as `sentences` (end mark, space, a capital or digit; no abbreviation), decided as the text streams: a
    bare space leaves it to the next piece."""
    if not (piece[:1].isspace() or text[-1:].isspace()) or not piece.strip():
        return False
    head = text.rstrip()
    return (bool(_CLOSED.search(head)) and bool(_OPENS.match(piece.lstrip())) and not _ABBREV.search(head)
            and len(head.split()) >= 4)


def is_sentence_start(text: str) -> bool:
    """Is `text` a whole first sentence (four words or more, then an end mark), one an answer can go on from?"""
    head = text.rstrip()
    return len(head.split()) >= 4 and bool(_CLOSED.search(head))


def score_sentences(question: str, candidates: list[str]) -> list[float]:
    """IDF-weighted overlap of question terms with each sentence (IDF over the candidates themselves)."""
    q_terms = set(terms(question))
    docs = [set(terms(s)) for s in candidates]
    df = Counter(t for d in docs for t in d)
    n = len(docs) or 1
    # Long sentences match more terms by chance and read badly as an answer: damp them.
    return [
        sum(math.log(1 + n / df[t]) for t in q_terms & d) / (1 + 0.04 * max(0, len(s.split()) - 12))
        for s, d in zip(candidates, docs, strict=True)
    ]


def relevant_sentences(question: str, passage: str, limit: int = 3, max_words: int = 90) -> str:
    """The passage trimmed to its sentences most relevant to the question, in their original order."""
    sents = sentences(passage)
    if not sents:
        return " ".join(passage.split()[:max_words])
    scores = score_sentences(question, sents)
    ranked = sorted(range(len(sents)), key=lambda i: (-scores[i], i))
    keep: list[int] = []
    words = 0
    for i in ranked:
        n = len(sents[i].split())
        if len(keep) >= limit or (keep and words + n > max_words):
            break
        keep.append(i)
        words += n
    return " ".join(sents[i] for i in sorted(keep))


def overlap(a: str, b: str) -> int:
    """Content terms two texts share: the support check for a cited sentence."""
    return len(set(terms(a)) & set(terms(b)))


# A page's sentence that announces what comes next on the page ("The formula below gives ...", "Let us now present
# a snippet ...", "Here is the comparison"): copied into an answer it points at nothing. General English only;
# "below" as a comparison ("falls below the ridge point") and "the following X: <the X>" say something.
_AHEAD = re.compile(
    r"\b(?:shown|see|listed|given|described|illustrated|presented|summari[sz]ed|outlined|as)\s+below\b"
    r"|^\W*below\s+(?:is|are)\b|\b(?:the|this|these)\s+(?:[\w-]+\s+){0,2}below\b(?!\s+(?:the|a|an|\d))"
    r"|^\W*(?:let\s+us|let's)\b|\bas\s+follows\W*$"
    r"|(?:^\W*(?:here\s+is|here\s+are|here's)|\bthe\s+following)\b(?![^:]*:\s*\S+\s+\S+)", re.IGNORECASE)


def points_ahead(claim: str) -> bool:
    """The sentence announces a figure, code or list that followed it on its page."""
    return bool(_AHEAD.search(MARKERS.sub("", claim).strip()))
