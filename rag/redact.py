"""The settings as they may be written down: in feedback records and run folders, which staff
read, copy and attach to issues. Secrets stay in the process: API keys (any `*_key`,
`*password`, `*secret` field, in any section), the password hashes of `[ui] users` (their user
names are kept) and the credentials of a URL (`http://user:pass@host`)."""

from __future__ import annotations

import re
from typing import Any

from rag.settings import Settings

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(r"(^|_)(key|password|secret)$")
_URL_CREDENTIALS = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@\s]+@", re.I)


def public_settings(settings: Settings) -> dict[str, Any]:
    """The settings as JSON with every secret replaced by REDACTED."""
    data = _redact(settings.model_dump(mode="json"))
    data["ui"]["users"] = [entry.split(":", 1)[0] for entry in settings.ui.users]
    return data


def _redact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {name: _redact(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_redact(item, key) for item in value]
    if isinstance(value, str):
        return REDACTED if _SECRET_KEY.search(key) else _URL_CREDENTIALS.sub(rf"\g<1>{REDACTED}@", value)
    return value
