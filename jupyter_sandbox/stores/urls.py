"""Store URLs as they may be shown: every credential masked, in one place.

A store's URL is printed (``%sandbox runs``), raised (``StoreError``), kept on the
store (``store.path``) and saved in notebook cards; each of them goes through
``masked``. It hides every form libpq takes a secret in: ``user:password@`` in a
URL, ``password``/``sslpassword``/``passfile`` in a URL's query or a
``key=value`` connection string, and, in messages, the literal values of the
URL's password and of ``PGPASSWORD``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import unquote

__all__ = ["SECRET_KEYS", "masked", "secrets_of"]

HIDDEN = "***"
SECRET_KEYS = ("password", "sslpassword", "passfile")  # libpq's connection parameters that are, or lead to, a secret
# user:password@ in a URL's authority: libpq's own reading, the password runs to the first '@' or '/'.
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)[^@/]*@")
_QUERY_PAIR = re.compile(r"([?&])([^=&#\s]*)=([^&#\s]*)")
_KEYWORD = re.compile(
    r"(?i)\b((?:ssl)?password|passfile)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&#]*)"
)  # key=value connection strings (a quoted value may hold spaces)
_SHORTEST = 4  # a shorter literal secret is masked only where its form shows it (masking "ab" everywhere garbles)


def secrets_of(url: str) -> list[str]:
    """The literal secrets a URL carries or its process holds: its password (as written and decoded), ``PGPASSWORD``."""
    found: list[str] = []
    match = _USERINFO.search(url)
    if match:
        found.append(url[match.end(1) : match.end() - 1])
    for _, key, value in _QUERY_PAIR.findall(url):
        if unquote(key).lower() in SECRET_KEYS:
            found.append(value)
    found += [m.group(3).strip("'") for m in _KEYWORD.finditer(url)]
    found.append(os.environ.get("PGPASSWORD", ""))
    decoded = [unquote(s) for s in found]
    return sorted({s for s in found + decoded if len(s) >= _SHORTEST}, key=len, reverse=True)


def masked(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` (a URL, or a message holding one) with every credential replaced by ``***``.

    ``secrets``: literal values to hide wherever they appear (``secrets_of(url)``).

    >>> masked("postgresql://team:hunter2@db/runs?password=x&sslmode=require")
    'postgresql://team:***@db/runs?password=***&sslmode=require'
    """
    text = _USERINFO.sub(rf"\1{HIDDEN}@", text)
    text = _QUERY_PAIR.sub(
        lambda m: f"{m.group(1)}{m.group(2)}={HIDDEN}" if unquote(m.group(2)).lower() in SECRET_KEYS else m.group(0),
        text,
    )
    text = _KEYWORD.sub(rf"\1\2{HIDDEN}", text)
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text
