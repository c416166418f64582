"""The participant's language in the browser: the best of the task's languages for the
browser's Accept-Language (RFC 9110 section 12.5.4, quality values; RFC 4647 lookup, which the
engine repeats), and the names the language switch shows."""

from __future__ import annotations

import re
from typing import List, Optional, Sequence

TAG = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")

# Each language named in itself, as a language switch shows it (the tag for any other).
AUTONYMS = {
    "ar": "العربية", "da": "Dansk", "de": "Deutsch", "el": "Ελληνικά", "en": "English",
    "es": "Español", "fi": "Suomi", "fr": "Français", "it": "Italiano", "ja": "日本語",
    "ko": "한국어", "nl": "Nederlands", "no": "Norsk", "pl": "Polski", "pt": "Português",
    "ru": "Русский", "sv": "Svenska", "tr": "Türkçe", "uk": "Українська", "zh": "中文",
}


def accepted(header: Optional[str]) -> List[str]:
    """The tags of an Accept-Language header, best first (equal weights keep their order);
    malformed entries, "*" and q=0 are left out. At most 32 entries are read."""
    entries = []
    for position, part in enumerate((header or "").split(",")[:32]):
        fields = [f.strip() for f in part.split(";")]
        tag = fields[0]
        if not TAG.match(tag):
            continue
        weight = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    weight = float(f[2:])
                except ValueError:
                    weight = -1.0
        if 0 < weight <= 1:
            entries.append((-weight, position, tag))
    return [tag for _, _, tag in sorted(entries)]


def lookup(tag: str, available: Sequence[str]) -> Optional[str]:
    """The first of ``tag``, then ``tag`` without its last subtag, ... that ``available``
    holds (case-insensitively), as the engine resolves a session's language."""
    lowered = {a.lower(): a for a in available}
    parts = tag.lower().split("-")
    while parts:
        found = lowered.get("-".join(parts))
        if found:
            return found
        parts.pop()
        if parts and len(parts[-1]) == 1:
            parts.pop()
    return None


def choose(header: Optional[str], available: Sequence[str],
           messages: Sequence[str] = ()) -> Optional[str]:
    """The language to open a session in: the browser's best language that the task's texts
    (``available``) or the engine's messages (``messages``: the shipped catalogues and the
    host's) are written in, as the browser wrote it (so "de-AT" picks German texts and
    messages); else None (the task's default language)."""
    for tag in accepted(header):
        if lookup(tag, available) or lookup(tag, messages):
            return tag
    return None


def switch(available: Sequence[str], current: Optional[str]) -> List[dict]:
    """The language switch's buttons: each of the task's languages, named in itself."""
    return [{"tag": tag, "name": AUTONYMS.get(tag.split("-")[0].lower(), tag),
             "current": tag == current} for tag in available]
