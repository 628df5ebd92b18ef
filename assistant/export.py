"""The learner's path and self-checks as files other tools read: Markdown (a checklist in the list's order, with
states and reading times) and an Anki-importable CSV of self-check questions.

Why these two: a Markdown checklist opens anywhere (an editor, a notes app, GitHub), and Anki is where many
learners keep flashcards. Both are written atomically (temp file + rename).
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

from assistant.digest import Digest
from assistant.path import LearningPath
from assistant.profile import READ, READING, SKIPPED

ANKI_COLUMNS = ("Front", "Back", "Tags")
ANKI_HEADER = "#separator:comma\n#html:false\n#columns:Front,Back,Tags\n#tags column:3\n"
_BOX = {READ: "x", SKIPPED: "x"}
_MD_SPECIAL = str.maketrans({c: f"\\{c}" for c in "\\`*_[]<>|#"})


def md_text(text: str) -> str:
    """Catalog text as literal Markdown: its own brackets, stars or tags must not become markup or links."""
    return " ".join(text.split()).translate(_MD_SPECIAL)


def md_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def path_markdown(path: LearningPath, list_url: str = "", now: datetime | None = None) -> str:
    """`# My GPU reading path`, the summary line, then per topic a `##` heading and per tier a `###` heading
    with its time left, and one checklist line per resource in the list's order:
    `- [x] [Title](url) — read · 12 min`. Read and skipped are ticked; the state is always written out."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# My GPU reading path", "", f"{md_text(path.summary())} (exported {stamp})", ""]
    topic = None
    for group in path.groups:
        if group.topic != topic:
            topic = group.topic
            lines += [f"## {md_text(topic)}", ""]
        tier = f"Tier {group.tier}" if group.tier is not None else "Further reading"
        lines += [f"### {tier} — time left: {md_text(group.left.label())}", ""]
        for item in group.items:
            res = item.resource
            box = _BOX.get(item.state, " ")
            title = f"[{md_text(res.title)}]({md_url(res.url)})" if res.url else md_text(res.title)
            state = f"**{item.state}**" if item.state == READING else item.state
            where = f" · in the list: {md_url(list_url + res.list_anchor)}" if list_url and res.list_anchor else ""
            lines.append(f"- [{box}] {title} — {state} · {md_text(item.estimate.label())}{where}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def anki_csv(digests: list[Digest]) -> str:
    """One note per self-check question: Front = the question (and the resource's title), Back = the answer
    and the passage it comes from, Tags = gpuguide, the resource id and how it was made."""
    out = io.StringIO()
    out.write(ANKI_HEADER)
    writer = csv.writer(out, lineterminator="\n")
    for digest in digests:
        for qa in digest.questions:
            front = f"{qa.question} ({digest.title})"
            back = f"{qa.answer} — from passage {qa.cite.n}: \"{qa.cite.quote}\" ({qa.cite.url})"
            tags = " ".join(["gpuguide", _tag(digest.resource_id), digest.mode])
            writer.writerow([_one_line(front), _one_line(back), tags])
    return out.getvalue()


def _tag(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def _one_line(text: str) -> str:
    return " ".join(text.split())

