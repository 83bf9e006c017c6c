"""The user's memory records: save, update, recall and delete ONE record (``storage.memory_records``, the book
``agentos memory`` uses; recall reads through ``query.recall``).

Writes through these tools are the explicit path, so their records are ``manual`` (the caller cannot say
otherwise: there is no source parameter). Every tool acts on the server's configured user only. There is
deliberately no tool to clear all memories: one model call must never be able to remove a user's memory
set (``agentos memory clear`` is the admin's command).

The stores and the read path are imported inside each tool, at its first call: the server answers
``initialize`` before they load.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from agentos_mem.kernel.files import UnsafePath
from agentos_mem.kernel.settings import Settings
from agentos_mem.mcp_server.tools import error, tool
from agentos_mem.storage.journal import JournalUnwritable
from agentos_mem.storage.memory_records import InvalidName, RecordError, RecordNotFound, open_book

_NAME = Field(description="The record's name (its file name): short, Chinese allowed, no '/', '..' or control characters, "
                          "e.g. '周报格式' or 'preferred-editor'.")
_DESC = Field(description="One line saying what the memory is; recall chooses records by it, e.g. '以后所有周报都用简洁格式'.")
_TYPE = Field(description="user: the user's role, background, stable preferences; feedback: a correction or confirmation of how you "
                          "should work; project: lasting project background that no file or system holds; reference: where an "
                          "external system, page or document lives.")

WRITE = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False, "open_world_hint": False}
DELETE = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": False}
RECALL = WRITE  # recall changes recallCount and lastRecalledAt, nothing the user wrote


class BookOnDemand:
    """The server's one memory book, opened at the first record tool's call (its proposal store holds a SQLite
    connection: a server that never touches a record opens none, and building the server writes nothing)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.opened = None

    def get(self):
        if self.opened is None:
            self.opened = open_book(self.settings)
        return self.opened


def caller_errors() -> tuple[type[Exception], ...]:
    """What a record tool answers as a tool error the caller can act on: a bad name or record, an unknown one, an
    unsafe path, a journal that cannot be written (a deletion is journaled or not made: the record is still there)."""
    return (RecordError, InvalidName, RecordNotFound, UnsafePath, JournalUnwritable)


def refused(e: Exception):
    """The tool error for one of ``caller_errors``."""
    return error(e.strerror if isinstance(e, JournalUnwritable) else str(e))


@tool("memory_save", "Save a memory", WRITE)
def memory_save(
    settings: Settings,
    book: BookOnDemand,
    name: Annotated[str, _NAME],
    description: Annotated[str, _DESC],
    type: Annotated[Literal["user", "feedback", "project", "reference"], _TYPE],
    content: Annotated[str, Field(description="The full memory (Markdown): what, why it matters, and any detail worth keeping.")] = "",
) -> dict[str, Any]:
    """Save a NEW memory about the user (lasting preferences, feedback on your work, project background, references).

    Save only what will still matter in later tasks and cannot be re-read from files or systems; an
    instruction for this task only ('this time', '本次') is not a memory. Fails when the name exists: use
    memory_update. Returns the record (name, description, type, source 'manual', recallCount, created, updated, body).
    """
    try:
        return book.get().create(settings.user, name, description, type, content).as_dict()
    except caller_errors() as e:
        return refused(e)


@tool("memory_update", "Update a memory", WRITE)
def memory_update(
    settings: Settings,
    book: BookOnDemand,
    name: Annotated[str, _NAME],
    description: Annotated[str | None, _DESC] = None,
    type: Annotated[Literal["user", "feedback", "project", "reference"] | None, _TYPE] = None,
    content: Annotated[str | None, Field(description="The new full content (replaces the body). Omit to keep it.")] = None,
) -> dict[str, Any]:
    """Change an existing memory's description, type or content. Its name, source and recall statistics are kept.

    Returns the updated record. Fails when no memory has that name (use memory_save to create one).
    """
    try:
        return book.get().update(settings.user, name, description=description, type=type, body=content).as_dict()
    except caller_errors() as e:
        return refused(e)


@tool("memory_recall", "Recall memories", RECALL)
def memory_recall(
    settings: Settings,
    book: BookOnDemand,
    query: Annotated[str, Field(description="The current request or the recent conversation, in any language.")],
    limit: Annotated[int | None, Field(ge=1, le=5, description="At most this many memories (1-5). Default: 5.")] = None,
) -> dict[str, Any]:
    """Recall the user's memories that clearly bear on the request: at most 5, chosen from a manifest of the
    200 most recently modified records (type, name, updated, description), then read in full.

    Returns {status: ok | none | empty | error, selector, hits: [{name, type, description, body, updated,
    source, recallCount, score}], compact: {count, status, names}, notices}. Keep only `compact` in later
    steps; the hits are for this one. Never fails: a problem gives an empty result with the reason in notices.
    """
    from agentos_mem.query.recall import recall  # lazy: the query stack, not before `initialize`
    res = recall(query, user=settings.user, settings=settings, book=book.get(), limit=limit)
    # the transport counts the recall (the read path writes nothing); a record it cannot count in place is named
    refused = book.get().mark_recalled(settings.user, res.names)
    return {**res.as_dict(), "compact": res.compact(), **({"not_counted": refused} if refused else {})}


@tool("memory_delete", "Delete a memory", DELETE)
def memory_delete(settings: Settings, book: BookOnDemand, name: Annotated[str, _NAME]) -> dict[str, Any]:
    """Delete ONE memory the user no longer wants kept (e.g. they said a preference no longer holds).

    Returns {deleted: name}. There is no way to delete all memories from here.
    """
    try:
        book.get().delete(settings.user, name)
    except caller_errors() as e:
        return refused(e)
    return {"deleted": name, "user": settings.user}
