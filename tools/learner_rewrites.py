"""Learner messages whose read list is true by construction: we write the plain message, the model rewrites it.

Why: asked to mention every read item in its own words, the 1.5B model mostly did not (a hand check of 20
unseen messages: 5 stated their whole label), and asked to leave a placeholder for the list it wrote the
placeholder as a heading or left it out (none of 6 tried frames usable). Paraphrasing a given message is a task
it does well. So (issue 24, "truth known by construction"):

1. **Names.** For every catalog item and every group a state can hold (a tier, a kind within a topic or section,
   a whole topic) the model writes a few ways a learner would refer to it. A name is kept only if it uses words
   of its own unit's names more than of any other item's (`item_name_ok`), and a group name only if it also says
   which group (`group_name_ok`: the tier's number, the kind, or "all / whole / every").
2. **Seed.** The sampled state as a plain message ("<SEED_OPENER> A, B and C. <the want>"), each read unit rendered
   by one of its kept names or its title (a group sometimes with its items in parentheses; lower case and one
   typo of ours for the lower-case style), joined as the style says (commas and "and", slashes, a bullet list).
3. **Rewrite.** The model rewrites the seed in the sampled style, free in wording and structure, keeping the names
   as written. A rewrite is kept only if every name is still there, each in a sentence that states reading (not
   a question, a wish or a negation), in the learner's voice, with the want still said (`rewrite_problem`).

The label is the sampled state; what the model changed is everything but the names. The seed's own words (its
opener, the want sentences) are the generator's and show in rewrites that keep them: the collect step counts the
rewrites that kept the seed's opening.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Sequence

from core.records import Resource

# How the seed states the reads. The committed rewrites (bench/data/learner-rewrites/, commit dd0acde) were
# seeded with "I have read"; the opener changed after, so `prompts` no longer regenerates that file byte for byte.
SEED_OPENER = "So far I've read"
REWRITE_PROMPT = """Rewrite the message below the way a learner would really type it into the chat box of a GPU reading-list assistant. {style}
Change the wording and sentence structure freely, but {keep}keep the meaning: what was read stays read, and the question stays the same question.{goal} Write only the rewritten message, in the first person, as the learner.

Message: {seed}"""

ITEM_NAME_PROMPT = """A learner is typing a chat message about a GPU reading list and mentions this resource: "{title}"{by} ({kind} on {host}).

Write 4 different short ways they might refer to it in casual writing: a nickname, a short form or acronym, the author's name (like "X's post"), or the site it is on. One per line, nothing else."""

GROUP_NAME_PROMPT = """A learner is typing a chat message about a tiered GPU reading list and wants to say they have read {what}.

Write 3 different short ways they might refer to that whole group in casual writing (by its topic, section, tier or kind). One per line, nothing else."""

# The style cues (tools/synth_learners.py STYLE_CUES) that say how resources are named or listed: applied by
# `seed_message`, the rewrite is only told to keep the names.
RENDER_CUES = frozenset({
    "When you mention a group, name the group and then list its items in parentheses.",
    "Refer to the resources by short forms or nicknames (an acronym, a version number, 'the X paper', a first "
    "word of the title) rather than their full titles.",
    "Refer to resources by their authors' names or the site they are on where you can.",
    "Use slashes and commas to list things together (like A/B/C).",
})

KIND_WORDS = {"paper": ("paper", "papers"), "blog": ("post", "posts", "blog", "blogs", "article", "articles"),
              "repo": ("repo", "repos", "repository", "repositories"), "docs": ("doc", "docs", "documentation"),
              "video": ("video", "videos", "talk", "talks", "lecture", "lectures"), "book": ("book", "books"),
              "site": ("site", "sites", "website", "websites"), "model": ("model", "models"),
              "community": ("community", "communities")}
NUMBER_WORDS = {1: ("1", "one", "first", "i"), 2: ("2", "two", "second", "ii"), 3: ("3", "three", "third", "iii"),
                4: ("4", "four", "fourth", "iv")}
WHOLE_WORDS = ("all", "whole", "every", "everything", "entire", "full", "complete")
# Words that make a name's sentence something other than "I have read these" (general English).
NOT_A_READ = frozenset({"should", "shall", "would", "could", "will", "want", "wanna", "plan", "planning", "going",
                        "recommend", "recommended", "suggest", "not", "never", "haven't", "havent", "didn't",
                        "didnt", "yet", "if", "whether", "next", "before", "need", "must", "try", "trying", "ready"})
ASSISTANT_OPENERS = re.compile(r"^\W*(sure|certainly|of course|here'?s|here is|absolutely|great question)\b",
                               re.IGNORECASE)
# A lone interjection before the learner's text ("Sure! I've read ..."): cut, the rest is checked as usual.
INTERJECTION = re.compile(r"^\W*(?:sure(?: thing)?|certainly|of course|absolutely|okay|ok)\s*[!.,]\s+", re.IGNORECASE)
ASSISTANT_VOICE = re.compile(r"\b(?:happy to help|help you|here'?s the|here is the|rewritten message|as a learner)\b",
                             re.IGNORECASE)
IN_PROGRESS = re.compile(r"\b(?:(?:i'm|i am|im)\s+(?:\w+ly\s+)?(?:reading|going through|working through)|"
                         r"(?:started|begun|began)\s+(?:reading|on)\b)", re.IGNORECASE)  # still reading is not read
# How the seed says an item is being read now (`synth_learners.py prompts --reading-now`).
NOW_OPENERS = ("Right now I'm reading", "I'm currently reading", "I'm in the middle of", "I'm working through",
               "At the moment I'm going through")
FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|im|ive|me|my|mine)\b", re.IGNORECASE)


def group_key(kind: str, ids: list[str]) -> str:
    """A stable id of a group unit, shared by its name prompt and every state holding it."""
    return f"{kind}:" + hashlib.sha1(",".join(sorted(ids)).encode()).hexdigest()[:12]


def _host(r: Resource) -> str:
    return r.url.split("/")[2].removeprefix("www.") if "://" in r.url else ""


def item_name_prompt(r: Resource) -> str:
    return ITEM_NAME_PROMPT.format(title=r.title, by=f" by {r.authors}" if r.authors else "", kind=r.kind,
                                   host=_host(r))


def group_description(resources: dict[str, Resource], kind: str, ids: list[str]) -> str:
    first = resources[ids[0]]
    if kind == "tier":
        return f"all the Tier {first.tier} items of {first.topic} ({first.section})"
    if kind == "kind":
        sections = {resources[i].section for i in ids}
        where = f"the {first.section} section of {first.topic}" if len(sections) == 1 else first.topic
        return f"all the {first.kind} resources of {where}"
    return f"the whole {first.topic} topic"


def name_lines(reply: str) -> list[str]:
    """The reply's candidate names: one per line, without numbering, bullets, quotes or a trailing gloss."""
    out = []
    for line in reply.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        line = re.split(r"\s+[-–—:(]\s*|\s*[:]\s+", line, maxsplit=1)[0] if len(line) > 40 else line
        line = line.strip().strip('"“”\'`*').strip().rstrip(".,;")
        line = re.sub(r"\s*\([A-Za-z]+\)$", "", line)  # a one-word gloss: "(section)", "(topic)"
        if 2 <= len(line) <= 60 :
            out.append(line)
    return list(dict.fromkeys(out))


def _words(text: str) -> set[str]:
    return {w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]+", text)}


def item_name_ok(name: str, rid: str, handles: dict[str, set[str]], general: frozenset[str] = frozenset()) -> bool:
    """The name uses more of its own item's distinctive words than of any other item's (so it points at it),
    and no word that is neither its own nor the field's (`general`: "GPU", place and kind words), which drops
    glosses such as "(short form)", a template's "X's post" and words the model made up."""
    if re.search(r"\bX\b", name):  # the prompt's own example ("X's post") copied
        return False
    said = {w for w in _words(name) if len(w) >= 2}
    own = len(said & handles[rid])
    if general and said - handles[rid] - general:
        return False
    return own > 0 and all(len(said & h) < own for other, h in handles.items() if other != rid)


def group_name_ok(name: str, resources: dict[str, Resource], kind: str, ids: list[str],
                  place_handles: set[str]) -> bool:
    """The name says its topic or section and which group: the tier's number, the kind, or a whole-word."""
    said = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", name)}
    if not _words(name) & place_handles:
        return False
    first = resources[ids[0]]
    if kind == "tier":
        return "tier" in said and bool(said & set(NUMBER_WORDS.get(first.tier or 0, ())))
    if kind == "kind":
        return bool(said & set(KIND_WORDS.get(first.kind, (first.kind,))))
    return bool(said & set(WHOLE_WORDS)) or "topic" in said or "section" in said


def rewrite_prompt(seed: str, mentions: list[str], style: list[str], goal: str = "") -> str:
    """The rewrite prompt: the seed, the style, the names to keep, and for a goal the topic's gist."""
    keep = "; ".join(f'"{m}"' for m in mentions)
    return REWRITE_PROMPT.format(
        style=" ".join(style), seed=seed,
        keep=f"keep these names exactly as written: {keep}. Also " if mentions else "",
        goal=(f" Do not use the topic's name: say what you want as a goal in plain words (the topic covers {goal})."
              if goal else ""))


def _norm(text: str) -> str:
    text = re.sub(r"[\"“”‘’'`*]", "", text.lower())
    return re.sub(r"\s+", " ", text).strip()


def _sentences(message: str) -> list[str]:
    return [s for line in message.splitlines() for s in re.split(r"(?<=[.!?])\s+", line) if s.strip()]


def _mention_problem(mention: str, sentences: list[str], now: bool) -> str:
    """Why the sentence a name is said in does not state it as read ("" when it does). A name being read now
    may be said as still reading ("I'm going through X") or as read."""
    said = [s for s in sentences if _norm(mention) in _norm(s)]
    if not said:
        return "a name changed or left out"
    if said[0].rstrip().endswith("?"):
        return "a name in a question"
    words = {w.lower() for w in re.findall(r"[A-Za-z']+", said[0])}
    not_a_read = words & (NOT_A_READ - {"going"} if now else NOT_A_READ) or any(w.endswith("n't") for w in words)
    if now and not_a_read:
        return "a name being read now in a sentence that is not a read"
    if not now and (not_a_read or IN_PROGRESS.search(said[0])):
        return "a name in a sentence that is not a read"
    return ""


def rewrite_problem(message: str, mentions: list[str], must_say: tuple[str, ...] = (),
                    now_mentions: Sequence[str] = ()) -> str:
    """Why a rewrite cannot carry its label, or "" when it can. A name being read now may be said as still
    reading or as read (neither makes it a pick), never in a question, a wish or a negation."""
    if ASSISTANT_OPENERS.search(message) or ASSISTANT_VOICE.search(message):
        return "written as the assistant"
    if not FIRST_PERSON.search(message):
        return "not in the first person"
    sentences = _sentences(message)
    for mention, now in [(m, False) for m in mentions] + [(m, True) for m in now_mentions]:
        if problem := _mention_problem(mention, sentences, now):
            return problem
    low = message.lower()
    if must_say and not any(re.search(rf"(?<![a-z0-9]){re.escape(w.lower())}", low) for w in must_say):
        return "the want is not said"
    return ""


def _typo(rng: random.Random, text: str) -> str:
    """One swapped pair of letters in one longer word (a learner's typo, made by us so the label stays true)."""
    words = [m for m in re.finditer(r"[A-Za-z]{6,}", text)]
    if not words:
        return text
    m = rng.choice(words)
    i = rng.randrange(m.start() + 1, m.end() - 2)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def render_mention(rng: random.Random, resources: dict[str, Resource], unit: dict,
                   names: dict[str, list[str]], style: list[str]) -> str:
    """One read unit as the learner writes it: a kept name (or the title), a group with its items in
    parentheses now and then, lower case and a typo when the style says so."""
    def item(rid: str) -> str:
        kept = names.get(rid, [])
        if kept and (rng.random() < 0.7 or any("nickname" in s or "authors" in s for s in style)):
            return rng.choice(kept)
        return resources[rid].title

    if unit["kind"] == "item":
        text = item(unit["ids"][0])
    else:
        key = group_key(unit["kind"], unit["ids"])
        text = rng.choice(names[key]) if names.get(key) else group_description(resources, unit["kind"], unit["ids"])
        if len(unit["ids"]) <= 4 and (rng.random() < 0.3 or any("parentheses" in s for s in style)):
            text += " (" + ", ".join(item(i) for i in unit["ids"]) + ")"
    if any("lower case" in s for s in style):
        text = text.lower()
        if rng.random() < 0.3:
            text = _typo(rng, text)
    return text


def join_mentions(rng: random.Random, mentions: list[str], style: list[str]) -> str:
    """The list in the style's form: a bullet list, slashes, or commas with "and"."""
    if len(mentions) == 1:
        return mentions[0]
    if any("bullet list" in s for s in style):
        return ":\n" + "\n".join(f"- {m}" for m in mentions) + "\n"
    if any("slashes" in s for s in style) and rng.random() < 0.7:
        return "/".join(mentions)
    last = rng.choice([" and ", ", and ", " & ", ", "])
    return ", ".join(mentions[:-1]) + last + mentions[-1]


def seed_message(rng: random.Random, resources: dict[str, Resource], units: list[dict],
                 names: dict[str, list[str]], style: list[str], want: str) -> tuple[str, list[str]]:
    """The plain message the model rewrites, and the names in it that the rewrite must keep."""
    if not units:
        return f"I have not read anything in the list yet. {want}", []
    mentions = [render_mention(rng, resources, u, names, style) for u in units]
    rng.shuffle(mentions)
    listed = join_mentions(rng, mentions, style)
    if listed.startswith(":"):
        return f"{SEED_OPENER}{listed}{want}", mentions
    return f"{SEED_OPENER} {listed}. {want}", mentions


def kept_names(resources: dict[str, Resource], replies: dict[str, str], item_handles: dict[str, set[str]],
               group_units: dict[str, tuple[str, list[str]]],
               place_handles: dict[str, set[str]],
               general: frozenset[str] = frozenset()) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Every unit's names that pass their check, and how many were written and kept."""
    names: dict[str, list[str]] = defaultdict(list)
    counts = {"item names written": 0, "item names kept": 0, "group names written": 0, "group names kept": 0}
    for key, reply in replies.items():
        for name in name_lines(reply):
            if key in group_units:
                kind, ids = group_units[key]
                counts["group names written"] += 1
                if group_name_ok(name, resources, kind, ids, place_handles[key]):
                    names[key].append(name)
                    counts["group names kept"] += 1
            elif key in resources:
                counts["item names written"] += 1
                if item_name_ok(name, key, item_handles, general):
                    names[key].append(name)
                    counts["item names kept"] += 1
    return dict(names), counts
