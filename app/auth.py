"""Optional login for the UI: users and PBKDF2-SHA256 password hashes from ragqa.toml's
`[ui] users` or the RAGQA_UI__USERS environment variable; `ragqa hash-password` makes a hash.
No password is stored in clear."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

_ITERATIONS = 240_000
_SCHEME = "pbkdf2_sha256"
MIN_PASSWORD = 12  # characters; with the login lockout (app/server.py) out of reach of guessing


def check_new_password(password: str) -> None:
    """Raise ValueError, in one line, for a password too short to be given a hash."""
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"the password has {len(password)} characters; use at least {MIN_PASSWORD}")


def hash_password(password: str, salt: bytes | None = None, iterations: int = _ITERATIONS) -> str:
    """'pbkdf2_sha256$ITERATIONS$SALT$HASH' (salt and hash in base64)."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return "$".join([_SCHEME, str(iterations), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()])


def check_password(users: dict[str, str], user: str, password: str) -> bool:
    """Whether `password` is `user`'s; an unknown user or a malformed hash is refused."""
    stored = users.get(user)
    if not stored:
        hash_password(password)  # the same work as for a known user: no timing oracle
        return False
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != _SCHEME:
            return False
        expected = base64.b64decode(digest)
        got = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(got, expected)
