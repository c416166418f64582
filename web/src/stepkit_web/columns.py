"""The kinds of column the service's tables share, each decided once: how wide an identifier, a
digest and a date are. ``db.py`` declares the tables with them, and the migrations
(migrations/versions) build the same tables with them.

A kind is frozen: an applied migration made its columns with it, so changing what a kind
makes would change, after the fact, what that migration did to every database it already ran
on, and ``db.py`` would silently stop matching them. A column that needs another width or type
gets a new kind (or a plain ``sa.Column``) and a new migration. tests/test_database.py checks
each kind against the columns the first migrations wrote out, and that the migrations, applied
in order, build exactly the tables ``db.py`` declares."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def identifier(name: str, *, nullable: bool = False, **kw: Any) -> sa.Column:
    """A task or participant identifier, or a step's (at most 200 characters)."""
    return sa.Column(name, sa.String(200), nullable=nullable, **kw)


def key(name: str, *, nullable: bool = False, **kw: Any) -> sa.Column:
    """64 characters: a SHA-256 in hex (tokens, keys, cookies are stored only so), a session's id."""
    return sa.Column(name, sa.String(64), nullable=nullable, **kw)


def date(name: str, *, nullable: bool = False) -> sa.Column:
    """An ISO 8601 UTC date as ``db.now_iso`` writes it."""
    return sa.Column(name, sa.String(40), nullable=nullable)


def word(name: str, width: int = 20, *, nullable: bool = False, **kw: Any) -> sa.Column:
    """One of a few words (a status, a kind, a reason)."""
    return sa.Column(name, sa.String(width), nullable=nullable, **kw)


def text(name: str, *, nullable: bool = True) -> sa.Column:
    """A document or a text of any length (restoration data, results, JSON, a study's pages)."""
    return sa.Column(name, sa.Text, nullable=nullable)


def number(name: str, kind: Any = sa.Integer, *, nullable: bool = False) -> sa.Column:
    """A version number, or (``sa.BigInteger``) a time in ms since the epoch."""
    return sa.Column(name, kind, nullable=nullable)


def flag(name: str, **kw: Any) -> sa.Column:
    """A yes or no that every row has."""
    return sa.Column(name, sa.Boolean, nullable=False, **kw)


def serial(name: str = "id") -> sa.Column:
    """A row number the database assigns (the primary key of an append-only table)."""
    return sa.Column(name, sa.Integer, primary_key=True, autoincrement=True)


def username(name: str, **kw: Any) -> sa.Column:
    """A staff member's user name (at most 100 characters)."""
    return sa.Column(name, sa.String(100), nullable=False, **kw)
