"""The knowledge base: map -> search / outline -> bounded section pages, and answers.

Five read-only tools for the server's configured user (``settings.user``), over ``query.kb`` and
``query.kb_answer``: ``kb_map``, ``kb_search``, ``kb_outline``, ``kb_read``, ``kb_answer``. Every call holds
to the three conditions of the read path: only published (ready) documents the user may see, in the task's
selected knowledge set when ``selection`` names one. A request the caller can fix (an empty query, an unknown
selection, a document outside the selected, published knowledge, a bad anchor, a bad or stale cursor) comes
back as a tool error whose text says what is wrong, never as a traceback.

The read path is imported inside each tool, at its first call: the server answers ``initialize`` before the
query modules (about half a second of imports) load.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from agentos_mem.embedders import EmbedderError
from agentos_mem.kernel.settings import Settings
from agentos_mem.mcp_server.tools import READ_ONLY, error, tool

_SELECTION = Field(description="The task's selected knowledge set: the name of a selection file "
                               "(agent-sync/03_knowledge/99_system/selections/<name>.yaml, listing documents, categories "
                               "and/or scopes). Default: every published document you may see.")
_DOC_ID = Field(description="A document id, as kb_map or kb_search give it, e.g. 'myhost_20261130_postgresql-逻辑复制'.")


def caller_errors() -> tuple[type[Exception], ...]:
    """What a knowledge tool answers as a tool error: a request the read path refuses, or an embedding model that
    cannot load or be reached (a setting the user can fix)."""
    from agentos_mem.query.kb import KBQueryError  # lazy: the query stack, not before `initialize`
    return (KBQueryError, EmbedderError)


def refused(e: Exception):
    """The tool error for one of ``caller_errors``."""
    if isinstance(e, EmbedderError):
        return error(f"the embedding model is unavailable: {e}; kb_search and kb_answer need it")
    return error(str(e))


@tool("kb_map", "Knowledge map", READ_ONLY)
def kb_map(settings: Settings, selection: Annotated[str | None, _SELECTION] = None) -> dict[str, Any]:
    """The map of the knowledge base: every published document you may read (in the selection, if given).

    Start here to see what the knowledge base holds. Returns {documents: [{id, title, scope (system |
    personal), category, summary, sections, tokens}], count}, by category then title. Then kb_search
    for sections, or kb_outline for one document's sections.
    """
    from agentos_mem.query.kb import doc_map  # lazy: the query stack, not before `initialize`
    try:
        docs = doc_map(settings, settings.user, selection=selection)
    except caller_errors() as e:
        return refused(e)
    return {"documents": docs, "count": len(docs)}


@tool("kb_search", "Search knowledge", READ_ONLY)
def kb_search(
    settings: Settings,
    query: Annotated[str, Field(description="What to look for, in Chinese or English, e.g. 'wal_level 怎么设置' or "
                                            "'backup retention'. \"Quoted phrases\" (also “…” or 「…」) must occur exactly.")],
    k: Annotated[int, Field(ge=1, le=50, description="How many sections to return at most.")] = 8,
    selection: Annotated[str | None, _SELECTION] = None,
) -> dict[str, Any]:
    """Search the sections of the published knowledge (keywords and meaning together).

    Returns {query, hits: [{doc_id, title, anchor, section, path, score, snippet, lines: [start, end],
    tokens, coverage}], sections, without_vectors, notice}, best first: one short snippet per section; coverage is
    the share of the query's terms found in the section (0: found by meaning only). without_vectors: how many of
    the sections searched are not embedded yet (found by keywords only; notice says so, else null). Read a hit with
    kb_read(doc_id, anchor).
    """
    from agentos_mem.query.kb import search  # lazy: the query stack, not before `initialize`
    try:
        found = search(settings, settings.user, query, selection=selection, k=k)
    except caller_errors() as e:
        return refused(e)
    return {key: found[key] for key in ("query", "hits", "sections", "without_vectors", "notice")}


@tool("kb_outline", "Document outline", READ_ONLY)
def kb_outline(settings: Settings, doc_id: Annotated[str, _DOC_ID], selection: Annotated[str | None, _SELECTION] = None) -> dict[str, Any]:
    """The outline of one document: its sections with anchors, levels, sizes and line ranges.

    Returns {id, title, scope, category, summary, outline: [{anchor, title, level, tokens, lines}],
    outline_text (an indented list)}. Read a section with kb_read(doc_id, anchor).
    """
    from agentos_mem.query.kb import read_doc  # lazy: the query stack, not before `initialize`
    try:
        return read_doc(settings, settings.user, doc_id, selection=selection)
    except caller_errors() as e:
        return refused(e)


@tool("kb_read", "Read a section", READ_ONLY)
def kb_read(
    settings: Settings,
    doc_id: Annotated[str, _DOC_ID],
    anchor: Annotated[str, Field(description="The section's anchor, as kb_outline or kb_search give it (a leading '#' is fine).")],
    cursor: Annotated[str | None, Field(description="To read the next page: the next_cursor of the previous page, as it was "
                                                    "given (it keeps the page size). Omit for the first page.")] = None,
    page_tokens: Annotated[int, Field(ge=10, le=8000, description="The most tokens one page may hold.")] = 400,
    selection: Annotated[str | None, _SELECTION] = None,
) -> dict[str, Any]:
    """Read one section of a document, one bounded page at a time.

    Returns {doc_id, title, anchor, section, path, text, page, pages, next_cursor (null on the last page),
    lines: [start, end] of this page, section_lines, tokens, subsections: [{anchor, title}]}. Pass
    next_cursor back to read the following page; a cursor from before the document changed is refused.
    """
    from agentos_mem.query.kb import read_section  # lazy: the query stack, not before `initialize`
    try:
        return read_section(settings, settings.user, doc_id, anchor, cursor=cursor, page_tokens=page_tokens, selection=selection)
    except caller_errors() as e:
        return refused(e)


@tool("kb_answer", "Answer from knowledge", READ_ONLY)
def kb_answer(
    settings: Settings,
    question: Annotated[str, Field(description="The question, in Chinese or English, e.g. 'wal_level 怎么设置？'.")],
    budget: Annotated[int, Field(ge=50, le=8000, description="Token budget: the most section text read to answer, and the most the answer may hold.")] = 1200,
    selection: Annotated[str | None, _SELECTION] = None,
) -> dict[str, Any]:
    """Answer a question from the published knowledge only, citing document and section.

    Searches, reads the best sections within the budget and answers from them. Returns {status: answered |
    partial | not_covered, answer, citations: [{doc_id, title, anchor, section, lines}], missing (what the
    knowledge base does not cover, or null), sections_read, tokens, pointers: [{doc_id, anchor, cited}]
    (keep these; kb_read them for more: the cited sections, then those holding what the answer left out),
    method, notice (sections not embedded yet, found by keywords only; null when none)}. not_covered means the knowledge base has nothing on the question: say so rather than
    answering from general knowledge; partial: say which part is not covered.
    """
    from agentos_mem.query.kb_answer import answer  # lazy: the query stack, not before `initialize`
    try:
        return answer(settings, settings.user, question, selection=selection, budget=budget)
    except caller_errors() as e:
        return refused(e)
