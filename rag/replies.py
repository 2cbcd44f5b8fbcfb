"""Reading structured data out of an LLM's reply: header extraction, the judge and QA
generation all ask for JSON and get it wrapped in prose or code fences."""

from __future__ import annotations

import json


def parse_json_object(reply: str) -> dict | None:
    """The first JSON object in an LLM reply; None when there is none."""
    start = reply.find("{")
    while start != -1:
        try:
            value, _end = json.JSONDecoder().raw_decode(reply[start:])
        except json.JSONDecodeError:
            start = reply.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None
