"""Generated "what should I read next?" messages whose truth is known by construction (issue 24).

Why: rules written against our own phrasings fit our style, not a learner's. Here a seeded sampler draws a
reading state from the catalog (single items, whole groups: a tier, a kind within a section or topic, a whole
topic; a focus topic or none; sometimes "skipped ahead" into a topic's higher tier; sometimes "anything else
about X" after a whole topic), the packaged chat model writes the learner's message in a sampled style (lists,
parentheses, nicknames, authors, goals instead of topic names, lower case, typos, long and short), and the
sampled state is the label. The expected picks follow the guide's own rule ("Read Tier 1 for all topics, then
Tier 2, ...") written out here independently of assistant/planner.py:

* no focus: unread Tier 1 items of every topic in the guide's order, then Tier 2, ...; untiered items last;
* a focus topic: its unread items first, lowest tier first, in the guide's order, then the rule above;
* skipped ahead in a topic: that topic's unread items below the highest tier read come first;
* "anything else about X" after a whole topic: the unread items elsewhere whose title names X (a set);
* never an item the learner read.

Three steps, so the model can run where it is fast:

    .venv/bin/python tools/synth_learners.py prompts --seeds 0 1 2 3 4 --per-seed 130 --out P.jsonl
    python3 tools/synth_learners.py generate --prompts P.jsonl --model Q.gguf --out R.jsonl   # GPU (transformers)
    .venv/bin/python tools/synth_learners.py collect --prompts P.jsonl --replies R.jsonl \
        --out bench/data/learner-messages.jsonl

`collect` drops a message that leaves out something the label says it mentions (no word of the unit's titles,
authors or place), so a label never claims a read the message does not state.

The current set is made the other way round (tools/learner_rewrites.py): `prompts --names` (the model names
every item and group), then `prompts --name-replies NR.jsonl` writes each state as a plain seed message and
asks the model to rewrite it, and `collect --rewrites` keeps a rewrite only if every name survived in a
sentence that states reading (docs/planner.md, "Data").
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.records import Resource  # noqa: E402
from tools import learner_rewrites as rewrites  # noqa: E402
from tools.generate import Sampling, add_generate_arguments, generate, read_jsonl, write_jsonl  # noqa: E402

log = logging.getLogger("synth_learners")

SCENARIOS = {"no-focus": 0.3, "focus": 0.4, "skipped-ahead": 0.15, "anything-else": 0.15}
UNIT_KINDS = {"item": 0.45, "tier": 0.3, "kind": 0.12, "topic": 0.13}
KIND_NAMES = {"paper": "papers", "blog": "blog posts", "repo": "repositories", "docs": "documentation pages",
              "site": "sites", "video": "videos", "book": "books", "model": "models", "community": "communities"}

# How the message is written: two cues per message, drawn at random (general writing styles, no wording of ours
# about any resource).
STYLE_CUES = (
    "Write it as a short bullet list of what you read, then one question.",
    "When you mention a group, name the group and then list its items in parentheses.",
    "Refer to the resources by short forms or nicknames (an acronym, a version number, 'the X paper', a first "
    "word of the title) rather than their full titles.",
    "Refer to resources by their authors' names or the site they are on where you can.",
    "Write all in lower case, like a quick chat message, with one or two typos.",
    "Keep it to one short sentence.",
    "Write a longer message (4-6 sentences) with a little background about yourself and why you are learning.",
    "Be informal and a bit chatty.",
    "Use slashes and commas to list things together (like A/B/C).",
    "Say what you finished in the middle of a sentence about something else.",
    "Write it like a terse note, no greeting.",
    "Ask politely, as to a mentor.",
)
# Capitalised title words that name no subject: the whole field's words, and title filler (adjectives, verbs,
# halves of a two-word name such as "Chips and Cheese" or "GPU Mode").
NOT_SUBJECTS = frozenset({
    "GPU", "GPUs", "CUDA", "NVIDIA", "LLM", "LLMs", "Kernel", "Kernels", "Understanding", "Fast", "Deep", "Dive",
    "Mastering", "Tutorial", "Introducing", "Efficient", "Accelerating", "Guide", "Automatic", "Evolution", "Model",
    "Models", "Multi", "Mode", "Chips", "Cheese", "Parallel", "Optimization", "Matrix", "Multiplication", "Tensor",
})
GOAL_CUE = ("Describe what you want to learn next as a goal in plain words (what you want to be able to do or "
            "understand), without using the name of the topic.")

PROMPT = """You are a learner using a tiered reading list on GPU performance engineering, and you type a message into its chat box asking what you should read next.

{read}
{want}
How to write it: {style}

Write only the message itself, in the first person, as the learner. Do not add anything before or after it."""


@dataclass
class Unit:
    """One thing the learner says they read: an item, or a whole group of the catalog."""

    kind: str  # item | tier | kind | topic
    ids: list[str]
    text: str  # how the model is told about it


@dataclass
class LearnerState:
    """The label of one message: what was read, what is asked, and the picks the guide's rules give."""

    seed: int
    index: int
    scenario: str
    units: list[Unit]
    read_ids: list[str]
    focus: str = ""  # a topic, or "" for none
    subject: str = ""  # "anything else about X"
    skipped_topic: str = ""
    reading_now: list[str] = field(default_factory=list)  # an item begun and still being read: never a pick
    gold: list[str] = field(default_factory=list)  # expected first picks (ids)
    accept: list[str] = field(default_factory=list)  # other unread items as good as a gold pick
    style: list[str] = field(default_factory=list)


def stop_words() -> frozenset[str]:
    """The project's stop words (imported late: the generate step runs where only torch is installed)."""
    from core.text import STOP_WORDS

    return STOP_WORDS


def catalog() -> list[Resource]:
    from ingest.catalog import load_catalog

    return sorted(load_catalog(), key=lambda r: r.position)


def topics_of(resources: list[Resource]) -> list[str]:
    return list(dict.fromkeys(r.topic for r in resources))


# --- the guide's rule --------------------------------------------------------------------------------


def guide_order(resources: list[Resource], read: set[str], focus: str = "", skipped_topic: str = "") -> list[Resource]:
    """Every unread item in the order the guide's rule gives for this state (see the module docstring)."""
    topics = topics_of(resources)
    unread = [r for r in resources if r.id not in read]

    def tier_key(r: Resource) -> tuple[int, int, int]:
        return (r.tier if r.tier is not None else 99, topics.index(r.topic), r.position)

    order: list[Resource] = []
    if focus:
        order += sorted((r for r in unread if r.topic == focus), key=tier_key)
    if skipped_topic:
        top = max(r.tier or 0 for r in resources if r.topic == skipped_topic and r.id in read)
        order += sorted((r for r in unread if r.topic == skipped_topic and r.tier is not None and r.tier < top),
                        key=tier_key)
    order += sorted(unread, key=tier_key)
    return list({r.id: r for r in order}.values())


def expected(resources: list[Resource], state: LearnerState) -> tuple[list[str], list[str]]:
    """Gold (the first 3 of the guide's order) and accepted (unread items of a gold pick's topic and tier:
    order inside a tier is the list's, not a rule). "Anything else about X": every unread item naming X."""
    read = set(state.read_ids) | set(state.reading_now)
    if state.subject:
        return [r.id for r in resources if r.id not in read and names_subject(r, state.subject)], []
    order = guide_order(resources, read, state.focus, state.skipped_topic)
    gold = [r.id for r in order[:3]]
    groups = {(r.topic, r.tier) for r in order[:3]}
    accept = [r.id for r in order[3:] if (r.topic, r.tier) in groups]
    return gold, accept


def names_subject(res: Resource, subject: str) -> bool:
    return bool(re.search(rf"(?<![A-Za-z0-9]){re.escape(subject)}(?![A-Za-z])", res.title, re.IGNORECASE))


def subjects(resources: list[Resource]) -> dict[str, set[str]]:
    """Names (capitalised or with digits, from titles) that titles of two or more topics use: subject → topics."""
    topics_by_word: dict[str, set[str]] = defaultdict(set)
    for r in resources:
        for w in set(re.findall(r"[A-Za-z][A-Za-z0-9]+", r.title)):
            if len(w) >= 3 and w.lower() not in stop_words() and (w[0].isupper() or re.search(r"\d", w)):
                topics_by_word[w].add(r.topic)
    return {w: t for w, t in topics_by_word.items() if len(t) >= 2 and w not in NOT_SUBJECTS}


# --- sampling ----------------------------------------------------------------------------------------


def skip_free(resources: list[Resource], read: set[str]) -> bool:
    """No topic has a read item above a tier with unread items (reading in the guide's order)."""
    for topic in topics_of(resources):
        items = [r for r in resources if r.topic == topic and r.tier is not None]
        top = max((r.tier for r in items if r.id in read), default=0)
        if any(r.tier < top and r.id not in read for r in items):
            return False
    return True


def _title(r: Resource) -> str:
    return f'"{r.title}"' + (f" by {r.authors}" if r.authors else "")


def candidate_units(resources: list[Resource], read: set[str], kind: str) -> list[Unit]:
    out: list[Unit] = []
    topics = topics_of(resources)
    if kind == "item":
        for r in resources:
            if r.id not in read:
                out.append(Unit("item", [r.id], _title(r)))
    elif kind == "tier":
        for topic in topics:
            for tier in sorted({r.tier for r in resources if r.topic == topic and r.tier is not None}):
                items = [r for r in resources if r.topic == topic and r.tier == tier]
                if any(r.id not in read for r in items):
                    section = items[0].section
                    names = "; ".join(_title(r) for r in items)
                    out.append(Unit("tier", [r.id for r in items],
                                    f'all of Tier {tier} of the "{topic}" topic (its "{section}" section): {names}'))
    elif kind == "kind":
        for topic in topics:
            in_topic = [r for r in resources if r.topic == topic]
            groups: dict[tuple[str, str], list[Resource]] = defaultdict(list)
            for r in in_topic:
                groups[(r.section, r.kind)].append(r)
                groups[("", r.kind)].append(r)
            for (section, k), items in groups.items():
                whole = [r for r in in_topic if not section or r.section == section]
                if len(items) < 2 or len(items) == len(whole) or all(r.id in read for r in items):
                    continue
                where = f'the "{section}" section of "{topic}"' if section else f'the "{topic}" topic'
                names = "; ".join(_title(r) for r in items)
                out.append(Unit("kind", [r.id for r in items], f"all the {KIND_NAMES.get(k, k)} of {where}: {names}"))
    elif kind == "topic":
        for topic in topics:
            items = [r for r in resources if r.topic == topic]
            if any(r.id not in read for r in items):
                out.append(Unit("topic", [r.id for r in items], f'the whole "{topic}" topic ({len(items)} items)'))
    return out


def sample_units(rng: random.Random, resources: list[Resource], n: int, read: set[str] | None = None,
                 avoid_topic: str = "") -> list[Unit]:
    """`n` units read in the guide's order (no skips), none in `avoid_topic`."""
    read = set(read or ())
    units: list[Unit] = []
    for _ in range(50):
        if len(units) >= n:
            break
        kind = rng.choices(list(UNIT_KINDS), weights=list(UNIT_KINDS.values()))[0]
        by_id = {r.id: r for r in resources}
        cands = [u for u in candidate_units(resources, read, kind)
                 if not (avoid_topic and any(by_id[i].topic == avoid_topic for i in u.ids))
                 and skip_free(resources, read | set(u.ids))]
        if kind == "topic" and len(read) > 40:
            cands = []
        if cands:
            unit = rng.choice(cands)
            units.append(unit)
            read |= set(unit.ids)
    return units


def topic_goal(resources: list[Resource], topic: str) -> str:
    return f'the "{topic}" topic ({topic_gist(resources, topic)})'


def topic_gist(resources: list[Resource], topic: str) -> str:
    """A topic told by its sections and first notes, without its name."""
    items = [r for r in resources if r.topic == topic]
    sections = list(dict.fromkeys(r.section for r in items))
    notes = "; ".join(r.note for r in items[:3] if r.note)
    return f"its sections: {', '.join(sections)}; for example: {notes}"


def sample_state(rng: random.Random, resources: list[Resource], seed: int, index: int) -> LearnerState:
    topics = topics_of(resources)
    tiered = [t for t in topics if any(r.topic == t and r.tier is not None for r in resources)]
    scenario = rng.choices(list(SCENARIOS), weights=list(SCENARIOS.values()))[0]
    state = LearnerState(seed, index, scenario, [], [])
    if scenario == "no-focus":
        state.units = sample_units(rng, resources, rng.choice([0, 1, 1, 2, 2, 3, 4]))
    elif scenario == "focus":
        state.focus = rng.choice(topics if rng.random() < 0.1 else tiered)
        state.units = sample_units(rng, resources, rng.choice([0, 1, 1, 2, 3]))
    elif scenario == "skipped-ahead":
        topic = rng.choice(tiered)
        high = [r for r in resources if r.topic == topic and (r.tier or 0) >= 2]
        picked = rng.sample(high, rng.choice([1, 1, 2]))
        first = [r for r in resources if r.topic == topic and r.tier == 1]
        lower = rng.sample(first, rng.randint(0, max(0, len(first) - 1)))  # at least one Tier 1 item unread
        state.units = [Unit("item", [r.id], _title(r)) for r in lower + picked]
        state.skipped_topic = topic
        state.units += sample_units(rng, resources, rng.choice([0, 0, 1]), {i for u in state.units for i in u.ids},
                                    avoid_topic=topic)
    else:
        pool = subjects(resources)
        for _ in range(50):
            subject = rng.choice(sorted(pool))
            topic = rng.choice(sorted(pool[subject]))
            items = [r for r in resources if r.topic == topic]
            elsewhere = [r for r in resources if r.topic != topic and names_subject(r, subject)]
            if len(elsewhere) >= 2:
                break
        state.subject = subject
        state.units = [Unit("topic", [r.id for r in items], f'the whole "{topic}" topic ({len(items)} items)')]
    state.read_ids = [r.id for r in resources if any(r.id in u.ids for u in state.units)]
    if state.focus and all(r.id in state.read_ids for r in resources if r.topic == state.focus):
        state.focus = ""
        state.scenario = "no-focus"
    state.gold, state.accept = expected(resources, state)
    return state


def prompt_for(rng: random.Random, resources: list[Resource], state: LearnerState) -> str:
    if state.units:
        lines = "\n".join(f"- {u.text}" for u in state.units)
        read = f"What you have read so far (mention every one of these, in your own words):\n{lines}\n"
    else:
        read = "You have not read anything in the list yet (say so).\n"
    want, cues = want_for(rng, resources, state)
    state.style = cues
    return PROMPT.format(read=read, want=want, style=" ".join(cues))


def want_for(rng: random.Random, resources: list[Resource], state: LearnerState) -> tuple[str, list[str]]:
    """What the learner asks for, and the two style cues (a goal in plain words half the time with a focus)."""
    cues = rng.sample(STYLE_CUES, 2)
    if state.scenario == "focus":
        want = f"What you want next: to go deeper into {topic_goal(resources, state.focus)}."
        if rng.random() < 0.5:
            cues = [GOAL_CUE, cues[0]]
    elif state.scenario == "skipped-ahead":
        topic = state.skipped_topic
        want = (f'What you want: you jumped straight into the advanced material of "{topic}" and got lost; ask '
                "whether you skipped something or are missing a prerequisite, and what to read.")
    elif state.scenario == "anything-else":
        want = (f'What you want: ask whether anything else in the guide, outside what you read, is about '
                f"{state.subject}.")
    else:
        want = rng.choice([
            "What you want: you have no particular focus yet; ask what the guide wants you to read next.",
            "What you want: ask what to read next; do not name any topic you want.",
            "What you want: ask for the next few things to read, in the guide's recommended order.",
        ])
    return want, cues


def want_sentence(rng: random.Random, resources: list[Resource], state: LearnerState) -> tuple[str, list[str], str]:
    """The seed's want in the learner's voice, the two style cues, and for a goal the topic's gist."""
    cues = rng.sample(STYLE_CUES, 2)
    goal = ""
    if state.scenario == "focus":
        want = f'I want to go deeper into the "{state.focus}" topic. What should I read next?'
        if rng.random() < 0.5:
            goal = topic_gist(resources, state.focus)
            cues = [GOAL_CUE, cues[0]]
    elif state.scenario == "skipped-ahead":
        want = (f'I jumped straight into the advanced material of "{state.skipped_topic}" and got lost. Did I skip '
                "something, or am I missing a prerequisite? What should I read?")
    elif state.scenario == "anything-else":
        want = f"Is anything else in the guide, outside what I read, about {state.subject}?"
    else:
        want = rng.choice(["I have no particular focus yet. What does the guide want me to read next?",
                           "What should I read next?",
                           "What are the next few things to read, in the guide's recommended order?"])
    return want, cues, goal


def add_reading_now(resources: list[Resource], state: LearnerState) -> None:
    """Make the learner be in the middle of one of the items the guide would pick next (the case where
    picking it is most wrong); the guide's picks then come after it. Its own random stream, so the states
    and messages of a seed stay the same with or without it."""
    if state.subject or not state.gold:
        return
    rng = random.Random(f"{state.seed}-{state.index}-now")
    state.reading_now = [rng.choice(state.gold + [i for i in state.accept if i not in state.gold][:3])]
    state.gold, state.accept = expected(resources, state)


def rewrite_row(rng: random.Random, resources: list[Resource], state: LearnerState,
                names: dict[str, list[str]]) -> dict:
    """The seed message of a state and its rewrite prompt (tools/learner_rewrites.py)."""
    want, cues, goal = want_sentence(rng, resources, state)
    state.style = cues
    render = random.Random(f"{state.seed}-{state.index}-render")
    units = [{"kind": u.kind, "ids": u.ids} for u in state.units]
    seed, mentions = rewrites.seed_message(render, {r.id: r for r in resources}, units, names, cues, want)
    now_mentions: list[str] = []
    if state.reading_now:
        now = rewrites.render_mention(render, {r.id: r for r in resources}, {"kind": "item", "ids": state.reading_now},
                                      names, cues)
        seed = seed.removesuffix(want) + f"{render.choice(rewrites.NOW_OPENERS)} {now}. " + want
        now_mentions = [now]
    # The cues about how names are written or listed were applied to the seed; the rewrite gets the others.
    writing = [c for c in cues if c not in rewrites.RENDER_CUES and c != GOAL_CUE]
    prompt = rewrites.rewrite_prompt(seed, mentions + now_mentions, writing or ["Write it like a quick chat message."],
                                     goal)
    return {"id": f"L{state.seed}-{state.index:03d}", "state": asdict(state), "seed_message": seed,
            "mentions": mentions, "now_mentions": now_mentions, "prompt": prompt}


def group_units(resources: list[Resource]) -> dict[str, tuple[str, list[str]]]:
    """Every group a sampled state can hold (a tier, a kind, a topic), by its key."""
    out = {}
    for kind in ("tier", "kind", "topic"):
        for unit in candidate_units(resources, set(), kind):
            out[rewrites.group_key(kind, unit.ids)] = (kind, unit.ids)
    return out


def name_prompts(resources: list[Resource]) -> list[dict]:
    """One prompt per catalog item and per group: the ways a learner would refer to it."""
    by_id = {r.id: r for r in resources}
    rows = [{"id": f"name:{r.id}", "prompt": rewrites.item_name_prompt(r)} for r in resources]
    for key, (kind, ids) in group_units(resources).items():
        what = rewrites.group_description(by_id, kind, ids)
        rows.append({"id": f"name:{key}", "prompt": rewrites.GROUP_NAME_PROMPT.format(what=what)})
    return rows


def must_say(resources: list[Resource], state: dict) -> tuple[str, ...]:
    """Words the rewrite has to hold for its want to be the label's: the subject of "anything else about X";
    a focus topic's or its sections' words unless the focus was asked as a goal in plain words."""
    if state["subject"]:
        return (state["subject"],)
    if state["scenario"] == "focus" and GOAL_CUE not in state["style"]:
        places = " ".join({f"{r.topic} {r.section}" for r in resources if r.topic == state["focus"]})
        return tuple(w[:5] for w in re.findall(r"[A-Za-z0-9]+", places)
                     if len(w) >= 3 and w.lower() not in stop_words())
    return ()


def kept_names(resources: list[Resource], replies_file: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The names the model wrote for items and groups (`prompts --names`) that pass their checks."""
    by_id = {r.id: r for r in resources}
    groups = group_units(resources)
    item_handles = {rid: _distinct_handles(by_id, {"kind": "item", "ids": [rid]}) for rid in by_id}
    place_handles = {key: _distinct_handles(by_id, {"kind": kind, "ids": ids}) for key, (kind, ids) in groups.items()}
    common, places = _field_words(by_id)
    general = common | places | {w[:5] for forms in rewrites.KIND_WORDS.values() for w in forms}
    replies = {r["id"].removeprefix("name:"): r["reply"] for r in read_jsonl(replies_file)}
    return rewrites.kept_names(by_id, replies, item_handles, groups, place_handles, general)


def collect_rewrites(args: argparse.Namespace) -> tuple[list[dict], dict[str, int]]:
    """The rewrites that still carry their label (tools/learner_rewrites.py); the counts of what was dropped."""
    ordered = catalog()
    replies = {r["id"]: r["reply"] for r in read_jsonl(args.replies)}
    dropped: dict[str, int] = defaultdict(int)
    kept = []
    for row in read_jsonl(args.prompts):
        if row["id"] not in replies:
            continue
        state = row["state"]
        message = rewrites.INTERJECTION.sub("", clean_reply(replies[row["id"]]), count=1)
        problem = rewrites.rewrite_problem(message, row["mentions"], must_say(ordered, state),
                                           row.get("now_mentions", []))
        if not problem and not 3 <= len(message.split()) <= 220:
            problem = "length"
        if problem:
            dropped[problem] += 1
            continue
        kept.append(labelled(row["id"], state, message))
    return kept, dropped


def labelled(row_id: str, state: dict, message: str) -> dict:
    row = {"id": row_id, "seed": state["seed"], "scenario": state["scenario"], "question": message,
           "read": state["read_ids"], "focus": state["focus"], "subject": state["subject"],
           "skipped_topic": state["skipped_topic"], "reading_now": state.get("reading_now", []),
           "gold": state["gold"], "accept": state["accept"],
           "units": [{"kind": u["kind"], "ids": u["ids"]} for u in state["units"]], "style": state["style"]}
    if not row["reading_now"]:
        del row["reading_now"]  # the splits written before --reading-now stay byte for byte
    return row


def cmd_prompts(args: argparse.Namespace) -> None:
    resources = catalog()
    if args.names:
        rows = name_prompts(resources)
        write_jsonl(args.out, rows)
        print(json.dumps({"prompts": len(rows), "out": str(args.out)}))
        return
    names, name_counts = kept_names(resources, args.name_replies) if args.name_replies else ({}, {})
    rows = []
    for seed in args.seeds:
        rng = random.Random(seed)
        for i in range(args.per_seed):
            state = sample_state(rng, resources, seed, i)
            if args.reading_now:
                add_reading_now(resources, state)
            if args.name_replies:
                rows.append(rewrite_row(rng, resources, state, names))
            else:
                rows.append({"id": f"L{seed}-{i:03d}", "state": asdict(state),
                             "prompt": prompt_for(rng, resources, state)})
    write_jsonl(args.out, rows)
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row["state"]["scenario"]] += 1
    print(json.dumps({"prompts": len(rows), "scenarios": counts, "names": name_counts, "out": str(args.out)}))


# --- the model -----------------------------------------------------------------------------------------


def cmd_generate(args: argparse.Namespace) -> None:
    rows = read_jsonl(args.prompts)
    started = time.perf_counter()
    prompts = [r["prompt"] for r in rows]
    replies = generate(prompts, args, Sampling(args.max_tokens, temperature=0.9, top_p=0.95))
    write_jsonl(args.out, [{"id": r["id"], "reply": text} for r, text in zip(rows, replies, strict=True)])
    print(json.dumps({"replies": len(replies), "backend": args.backend,
                      "seconds": round(time.perf_counter() - started, 1)}))


# --- parsing ------------------------------------------------------------------------------------------

_WRAPPER = re.compile(r"^\s*(?:\*\*)?(?:message|learner|me|user)\s*(?:\*\*)?\s*:\s*", re.IGNORECASE)
# The model's own lead-in line before the message ("Sure, here's the rewritten message:").
_LEAD_IN = re.compile(r"^[^\n]{0,80}\b(?:rewritten|rewrite|message|version)\b[^\n]{0,20}:\s*\n", re.IGNORECASE)


def clean_reply(text: str) -> str:
    """The message alone: no "Message:" label, no wrapping quotes, no trailing note from the model."""
    text = text.strip()
    text = _LEAD_IN.sub("", text)
    text = _WRAPPER.sub("", text.strip())
    text = re.split(r"\n\s*\n(?:note|this message|---|\(note)", text, maxsplit=1, flags=re.IGNORECASE)[0]
    text = text.strip().strip('"“”').strip()
    return text


def _handles(resources: dict[str, Resource], unit: dict) -> set[str]:
    """Words a mention of the unit would use: its titles', authors', section's and topic's words, and acronyms."""
    out: set[str] = set()
    for rid in unit["ids"]:
        r = resources[rid]
        for text in (r.title, r.authors, r.section, r.topic, r.url.split("/")[2] if "://" in r.url else ""):
            for w in re.findall(r"[A-Za-z0-9]+", text):
                if len(w) >= 3 and w.lower() not in stop_words():
                    out.add(w.lower()[:5])
        for acro in re.findall(r"\b[A-Z][A-Za-z]*[A-Z0-9]+[A-Za-z0-9]*\b", r.title):
            out.add(acro.lower()[:5])
    if unit["kind"] != "item":
        out |= {"tier", "all", "whole", "every", "everyt", "entir"}
    return out


def mentions_unit(message: str, resources: dict[str, Resource], unit: dict) -> bool:
    said = {w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]+", message) if len(w) >= 3}
    return bool(said & _handles(resources, unit))


_GROUP_CUES = {"tier", "tiers", "t1", "t2", "t3", "all", "whole", "every", "everything", "entire", "topic", "section"}
_KIND_CUES = {"paper": {"paper", "papers"}, "blog": {"post", "posts", "blog", "blogs", "article", "articles"},
              "repo": {"repo", "repos", "repository", "repositories", "code"}, "docs": {"doc", "docs", "documentation"},
              "video": {"video", "videos", "talk", "talks"}, "book": {"book", "books"}, "site": {"site", "sites"}}


def _field_words(resources: dict[str, Resource]) -> tuple[set[str], set[str]]:
    """The whole field's words (in more than an eighth of the titles, and stop words) and the words of topic
    and section names, as 5-letter prefixes."""
    everything = list(resources.values())
    title_df: dict[str, int] = defaultdict(int)
    for r in everything:
        for w in {w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]+", r.title)}:
            title_df[w] += 1
    common = {w for w, c in title_df.items() if c > len(everything) / 8} | {w[:5] for w in stop_words()}
    places = {w.lower()[:5] for r in everything for w in re.findall(r"[A-Za-z0-9]+", f"{r.topic} {r.section}")}
    return common, places


def _distinct_handles(resources: dict[str, Resource], unit: dict) -> set[str]:
    """The words only this unit's own names use (5-letter prefixes): an item's title, author and host words
    that are not words of a topic or section name and not the whole field's (in more than an eighth of the
    titles); a group's topic and section words, likewise."""
    common, places = _field_words(resources)

    def handles(text: str, drop: set[str]) -> set[str]:
        return {w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]+", text) if len(w) >= 3 or re.search(r"\d", w)} - drop

    out: set[str] = set()
    for rid in unit["ids"]:
        r = resources[rid]
        host = r.url.split("/")[2] if "://" in r.url else ""
        if unit["kind"] == "item":
            out |= handles(f"{r.title} {r.authors} {host}", common | places)
        else:
            out |= handles(f"{r.topic} {r.section}", common)
    return out


def states_its_reads(message: str, resources: dict[str, Resource], unit: dict) -> bool:
    """Stricter than mentions_unit (`collect --strict`): the message uses a word only the unit's own names
    use, and a group (a tier, a kind, a topic) is also said to be one: a tier or quantifier word, or its kind."""
    said = {w.lower()[:5] for w in re.findall(r"[A-Za-z0-9]+", message)}
    if not said & _distinct_handles(resources, unit):
        return False
    if unit["kind"] == "item":
        return True
    cues = {c[:5] for c in _GROUP_CUES}
    if unit["kind"] == "kind":
        kinds = {resources[i].kind for i in unit["ids"]}
        cues |= {c[:5] for k in kinds for c in _KIND_CUES.get(k, set())}
    return bool(said & cues)


def cmd_collect(args: argparse.Namespace) -> None:
    if args.rewrites:
        kept, dropped = collect_rewrites(args)
        write_jsonl(args.out, kept)
        by_seed_kept: dict[int, int] = defaultdict(int)
        for row in kept:
            by_seed_kept[row["seed"]] += 1
        seeds = {r["id"]: r["seed_message"] for r in read_jsonl(args.prompts)}
        same_opening = sum(row["question"].lower().startswith(" ".join(seeds[row["id"]].lower().split()[:3]))
                           for row in kept)
        print(json.dumps({"kept": len(kept), "dropped": dropped, "by_seed": by_seed_kept,
                          "kept the seed's opening": same_opening, "out": str(args.out)}))
        return
    resources = {r.id: r for r in catalog()}
    prompts = {r["id"]: r for r in read_jsonl(args.prompts)}
    kept, dropped = [], defaultdict(int)
    for reply in read_jsonl(args.replies):
        row = prompts[reply["id"]]
        message = clean_reply(reply["reply"])
        state = row["state"]
        if len(message.split()) < 3 or len(message) > 1500:
            dropped["length"] += 1
            continue
        if not all(mentions_unit(message, resources, u) for u in state["units"]):
            dropped["a read unit not mentioned"] += 1
            continue
        if args.strict and not all(states_its_reads(message, resources, u) for u in state["units"]):
            dropped["strict: a read unit not stated by its own names"] += 1
            continue
        kept.append(labelled(row["id"], state, message))
    write_jsonl(args.out, kept)
    by_seed: dict[int, int] = defaultdict(int)
    for row in kept:
        by_seed[row["seed"]] += 1
    print(json.dumps({"replies": len(prompts), "kept": len(kept), "dropped": dropped, "by_seed": by_seed,
                      "out": str(args.out)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prompts", help="sample reading states and write one prompt each")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--per-seed", type=int, default=130)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--names", action="store_true", help="the naming prompts: one per catalog item and group")
    p.add_argument("--name-replies", type=Path, default=None,
                   help="the naming replies: write seed messages and their rewrite prompts (tools/learner_rewrites.py)")
    p.add_argument("--reading-now", action="store_true",
                   help="the learner is also in the middle of one item the guide would pick next (never a pick)")
    p = add_generate_arguments(sub, backend="transformers", batch=128)
    p.add_argument("--max-tokens", type=int, default=220)
    p = sub.add_parser("collect", help="parse the replies into labelled messages")
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--replies", type=Path, required=True)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "bench" / "data" / "learner-messages.jsonl")
    p.add_argument("--strict", action="store_true",
                   help="also drop a message whose read units are not stated by their own names (states_its_reads)")
    p.add_argument("--rewrites", action="store_true", help="the replies are rewrites (prompts --name-replies)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    {"prompts": cmd_prompts, "generate": cmd_generate, "collect": cmd_collect}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
