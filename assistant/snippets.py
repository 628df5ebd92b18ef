"""A result's snippet from crawled Markdown: the prose as escaped HTML, inline code kept as <code>, markup
(headings, emphasis, links, images, tables, raw HTML) reduced to its words. Nothing from a page reaches the
browser as markup."""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False}).enable("table")
_BLOCK_BREAKS = {"paragraph_close", "heading_close", "list_item_close", "tr_close", "th_close", "td_close", "fence",
                 "code_block", "blockquote_close"}


def _segments(markdown: str) -> list[tuple[str, bool]]:
    """(text, is_code) pieces in reading order; a block boundary becomes a space."""
    out: list[tuple[str, bool]] = []
    for token in _MD.parse(markdown or ""):
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "text":
                    out.append((child.content, False))
                elif child.type == "code_inline":
                    out.append((child.content, True))
                elif child.type in ("softbreak", "hardbreak"):
                    out.append((" ", False))
                elif child.type == "image":
                    alt = "".join(c.content for c in child.children or [])
                    if alt:
                        out.append((alt, False))
        elif token.type in ("fence", "code_block"):
            code = " ".join(token.content.split())
            if code:
                out.append((code, True))
        if token.type in _BLOCK_BREAKS:
            out.append((" ", False))
    return out


def snippet_text(markdown: str, limit: int = 300) -> str:
    """The snippet as plain text (unescaped), cut at a word boundary near `limit` characters."""
    return _cut("".join(t for t, _ in _segments(markdown)), limit)


def snippet_html(markdown: str, limit: int = 300) -> str:
    """The snippet as safe HTML: escaped text, inline code in <code>, at most about `limit` characters."""
    parts: list[str] = []
    used = 0
    for text, code in _segments(markdown):
        text = _fold(text)
        if not text:
            continue
        room = limit - used
        if room <= 0:
            parts.append(" …")
            break
        if len(text) > room:
            if code:  # half a code span reads as a different expression
                parts.append(" …")
                break
            text = _cut(text, room)
        used += len(text)
        parts.append(f"<code>{html.escape(text.strip())}</code>" if code else html.escape(text))
    out = "".join(parts)
    while "  " in out:
        out = out.replace("  ", " ")
    return out.strip()


def _fold(text: str) -> str:
    """Runs of whitespace as one space, a leading or trailing one kept (it separates this piece from the next)."""
    if not text:
        return ""
    core = " ".join(text.split())
    if not core:
        return " "
    return (" " if text[0].isspace() else "") + core + (" " if text[-1].isspace() else "")


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: max(1, limit - 1)]
    return (head.rsplit(" ", 1)[0] if " " in head else head) + " …"
