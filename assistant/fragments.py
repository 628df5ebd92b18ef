"""Links that land on the sentence: a citation's URL with a text fragment of the sentence that supports it.

A text fragment (WICG "URL Fragment Text Directives", https://wicg.github.io/scroll-to-text-fragment/) is
`#:~:text=textStart[,textEnd]`: the browser scrolls to the first instance of textStart and highlights up to
the first textEnd after it. The directive comes after the page's own fragment (`#section:~:text=...`).
Dash, comma and ampersand inside a term must be percent-encoded (they are the directive's syntax); we encode
everything but letters, digits and `_.~`.

Matching is against the text as the browser renders it, while chunk text is markdown (trafilatura's): so the
terms are taken from the sentence with its markup stripped (`plain_text`). A short sentence is the whole
term; a long one is its first and last few words. PDF viewers do not support text fragments, so a PDF link
is `#page=N` when the page is known and the plain URL otherwise.

All functions are pure.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from assistant.sentences import plain_math, sentences
from core.records import Chunk

EDGE_WORDS = 4  # words of textStart and textEnd for a long sentence (what browsers' "copy link to highlight" use)
SHORT_WORDS = 10  # up to this many words the whole sentence is textStart (no textEnd)
PAGE_BREAK = "\f"  # between pages in extracted PDF text (ingest/extract.py)
DIRECTIVE = ":~:"

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"\*(?=\S)(.+?)(?<=\S)\*")
_EM_UNDERSCORE = re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", re.MULTILINE)
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", re.MULTILINE)
_QUOTE_MARKER = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_ESCAPE = re.compile(r"\\([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
_WORD = re.compile(r"\w")
_PDF_PATH = re.compile(r"(\.pdf$)|(^/pdf/)", re.IGNORECASE)


def plain_text(markdown: str) -> str:
    """The words of a markdown snippet as a browser shows them: emphasis, code ticks, link syntax, images,
    heading #s, list and quote markers and backslash escapes removed, simple inline TeX as MathJax shows it
    ("1.1$\\times$" → "1.1×"); whitespace collapsed. Code spans keep their content verbatim (an `__init__`
    is not emphasis)."""
    codes: list[str] = []

    def keep_code(match: re.Match[str]) -> str:
        codes.append(match.group(2).strip())
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE_SPAN.sub(keep_code, plain_math(markdown))
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HEADING.sub(r"\1", text)
    text = _QUOTE_MARKER.sub("", text)
    text = _LIST_MARKER.sub("", text)
    for pattern in (_STRONG, _STRIKE):
        text = pattern.sub(lambda m: m.group(m.lastindex or 0), text)
    text = _EM_STAR.sub(r"\1", text)
    text = _EM_UNDERSCORE.sub(r"\1", text)
    text = _ESCAPE.sub(r"\1", text).replace("|", " ")
    text = _PLACEHOLDER.sub(lambda m: codes[int(m.group(1))], text)
    return " ".join(text.split())


def first_sentence(passage: str) -> str:
    """The passage's first prose sentence (headings, code, tables skipped), else its first line of text."""
    found = sentences(passage)
    if found:
        return found[0]
    return next((line.strip() for line in passage.splitlines() if _WORD.search(line)), "")


def _words(sentence: str) -> list[str]:
    """The sentence's plain words, without the punctuation that opens or closes it (an added " …", quotes,
    a final full stop): a term must start and end on a word, as the browser's matching is word-bounded."""
    words = plain_text(sentence).split()
    while words and not _WORD.search(words[0]):
        words.pop(0)
    while words and not _WORD.search(words[-1]):
        words.pop()
    if words:
        words[0] = re.sub(r"^\W+", "", words[0])
        words[-1] = re.sub(r"\W+$", "", words[-1])
    return words


def encode_term(term: str) -> str:
    """A text directive term, percent-encoded: '-', ',' and '&' always (the directive's own syntax)."""
    return quote(term, safe="").replace("-", "%2D")


def _start_words(words: list[str], context: str) -> int:
    """How many leading words make textStart: EDGE_WORDS, more while an earlier copy of those words in
    `context` (the text the sentence sits in) would catch the browser first."""
    flat = plain_text(context).lower() if context else ""
    whole = " ".join(words).lower()
    at = flat.find(whole) if flat else -1
    count = EDGE_WORDS
    while at > 0 and count < len(words) - EDGE_WORDS:
        start = " ".join(words[:count]).lower()
        if flat.find(start) >= at:
            break
        count += 1
    return count


def text_directive(sentence: str, context: str = "") -> str:
    """`text=start[,end]` for a sentence (markdown allowed), or "" when it has no words. `context`, the
    passage or page around it, lets textStart grow past an earlier copy of its first words."""
    words = _words(sentence)
    if not words:
        return ""
    if len(words) <= SHORT_WORDS:
        return "text=" + encode_term(" ".join(words))
    count = _start_words(words, context)
    return f"text={encode_term(' '.join(words[:count]))},{encode_term(' '.join(words[-EDGE_WORDS:]))}"


def is_pdf_url(url: str) -> bool:
    """A URL that serves a PDF by its path (`….pdf`, arXiv's `/pdf/ID`): text fragments do not apply there."""
    try:
        return bool(_PDF_PATH.search(urlsplit(url).path))
    except ValueError:
        return False


def with_text_fragment(url: str, sentence: str, context: str = "") -> str:
    """The URL with a text directive for `sentence` after its own fragment (an earlier directive replaced)."""
    directive = text_directive(sentence, context)
    if not url or not directive:
        return url
    base, hash_, fragment = url.partition("#")
    fragment = fragment.split(DIRECTIVE, 1)[0] if hash_ else ""
    return f"{base}#{fragment}{DIRECTIVE}{directive}"


def with_page(url: str, page: int) -> str:
    """A PDF URL opened at `page` (the PDF open parameter `page=N`), its other open parameters kept."""
    base, _, fragment = url.partition("#")
    params = [p for p in fragment.split("&") if p and not p.lower().startswith("page=")]
    return f"{base}#" + "&".join([f"page={page}", *params])


def cite_link(url: str, quote_text: str, passage: str = "", page: int | None = None) -> str:
    """Where a citation's link goes: the PDF page when known; else, for a web page, a text fragment of the
    supporting sentence (`quote_text`, or the passage's first prose sentence); else the URL as it is."""
    if not url:
        return url
    if page is not None:
        return with_page(url, page)
    if is_pdf_url(url):
        return url
    sentence = quote_text or first_sentence(passage)
    return with_text_fragment(url, sentence, passage)


def page_of(chunk: Chunk, quote_text: str = "") -> int | None:
    """The PDF page of a quote in a chunk (the chunk's first page when the quote is not found in it), from the
    page the chunker recorded (`chunk.extra["page"]`) and the page breaks inside the chunk; None if unknown."""
    first = chunk.extra.get("page") if chunk.extra else None
    if not isinstance(first, int):
        return None
    words = _words(quote_text)[:EDGE_WORDS] if quote_text else []
    if not words:
        return first
    pattern = r"\W+".join(re.escape(w) for w in words)
    match = re.search(pattern, chunk.text, re.IGNORECASE)
    if match is None:
        return first
    return first + chunk.text.count(PAGE_BREAK, 0, match.start())
