"""A list counted as a whole, with no LLM: "how many steps are in the pre-run checklist" is the
number of items of the list under the heading the question names. The small model counts the
items the context happened to show, not the list; a list is a one-column table here, each item
a `Fact` of its chunk, so the answer is cited like a table's count (rag/cells.py asks this when no
table answers a count).

>>> text = ("### 4. Pre-run checklist\\n\\nBefore production:\\n\\n- Check the recipe.\\n\\n"
...         "- Check the width.\\n\\nThen log it.\\n\\n- A note after the list")
>>> lists(text)
[('4. Pre-run checklist', ['Check the recipe.', 'Check the width.'])]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.facts import Fact
from rag.labels import content, named, same
from rag.table_question import CellAnswer

_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*$")
_ITEM = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+(.+?)\s*$")
_NUMBERED = re.compile(r"^\s*\d{1,2}(?:\.\d{1,2})*\.?\s+")
_SHOWN = 12  # items written out in the answer; the rest are counted
# What a list's items are, whatever it lists ("how many near misses at Derby" counts no list of
# Derby's bullet points; "how many checks are on the checklist" may)
_ITEM_WORDS = frozenset("item step check point action requirement rule stage task thing entry criterion "
                        "criteria condition control measure principle question topic 항목 단계 절차".split())


def lists(text: str) -> list[tuple[str, list[str]]]:
    """(heading, its list's items) for each heading of a chunk with a list under it: its first
    list, an introducing paragraph allowed before it; a paragraph after it ends it."""
    found: list[tuple[str, list[str]]] = []
    heading, items, ended = "", [], False
    for line in (line for line in text.splitlines() if line.strip()):
        if match := _HEADING.match(line):
            if heading and len(items) > 1:
                found.append((heading, items))
            heading, items, ended = match.group(1), [], False
        elif (match := _ITEM.match(line)) and not ended:
            items.append(match.group(1))
        elif items:
            ended = True
    if heading and len(items) > 1:
        found.append((heading, items))
    return found


def counted_list(asked: Sequence[str], noun: str, candidates: Sequence[NodeWithScore], min_share: float,
                 korean: bool = False) -> CellAnswer | None:
    """The count of the one list whose heading the question names (most of its words, those
    that are not the counted noun), among the candidate chunks; None when none or two do."""
    own = tuple(w for w in asked if w != noun)
    generic = noun.lower().removesuffix("s") in _ITEM_WORDS or noun in _ITEM_WORDS
    found = []
    for node in candidates:
        text = node.node.get_content(metadata_mode=MetadataMode.NONE)
        for heading, items in lists(text):
            title = _NUMBERED.sub("", heading)  # "4. Pre-run checklist": its number is no word to name
            share, _, hits = named(title, own)
            holds = generic or any(same(w, noun) for w in content(title))
            if share >= min_share and content(title) and holds:
                found.append((share, len(hits), node.node, heading, items))
    best = max(((share, hits) for share, hits, *_ in found), default=None)
    top = [f for f in found if (f[0], f[1]) == best]
    if len({(node.metadata.get("doc"), heading) for _, _, node, heading, _ in top}) != 1:
        return None
    _, _, node, heading, items = top[0]
    heading = _NUMBERED.sub("", heading)
    doc = str(node.metadata.get("doc", ""))
    facts = tuple(Fact(doc, node.node_id, f"#list|{heading}", str(i), heading, item, None, "",
                       node.metadata.get("page"), node.metadata.get("slide"), heading)
                  for i, item in enumerate(items, 1))
    shown = "; ".join(f"{i}. {item.rstrip('.')}" for i, item in enumerate(items[:_SHOWN], 1))
    more = ", ..." if len(items) > _SHOWN else ""
    subject = doc.rsplit(".", 1)[0]
    text = (f"{subject}의 {heading}에는 항목 {len(items)}개가 있습니다: {shown}{more}." if korean
            else f"In {subject}, {heading} lists {len(items)} {noun}: {shown}{more}.")
    return CellAnswer("count", text, facts)
