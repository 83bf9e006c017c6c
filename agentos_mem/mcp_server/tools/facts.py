"""The facts (L2): ``fact_lookup`` reads the facts about one subject (``query.facts``: valid now, at the end of a day, or
every version), ``fact_forget`` closes one the user wants forgotten (``services.decisions.forget_fact``, the same
function ``agentos facts forget`` calls; journaled there).

The read path and the decision service are imported inside each tool, at its first call: the server answers
``initialize`` before those modules (about half a second of imports) load.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import Field

from agentos_mem.kernel.domain import ROW_ID_MAX
from agentos_mem.kernel.settings import Settings
from agentos_mem.vocabulary.subjects import load_aliases, subject_key
from agentos_mem.kernel.workspace import Workspace
from agentos_mem.mcp_server.tools import READ_ONLY, error, tool
from agentos_mem.services.decisions import forget_fact
from agentos_mem.storage.journal import JournalUnwritable

FORGET = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": False}


def matching(rows: list[dict], key: str) -> list[dict]:
    """Rows about ``key``: equal subject keys, else keys containing it (as ``FactStore.history`` matches)."""
    exact = [r for r in rows if r.get("subject_key") == key]
    if exact or not key:
        return exact
    return [r for r in rows if key in (r.get("subject_key") or "")]


@tool("fact_lookup", "Look up facts", READ_ONLY)
def fact_lookup(
    settings: Settings,
    subject: Annotated[str, Field(description="What the fact is about, as the user would name it, in either language, e.g. 'database port', '数据库端口', '服务器配置'. Aliases map both languages to one subject; a part of a subject matches too.")],
    as_of: Annotated[str | None, Field(description="A day, YYYY-MM-DD: the facts that held at the end of that day. Default: now.")] = None,
    history: Annotated[bool, Field(description="Return every version of the facts about the subject instead, superseded ones included, oldest first (as_of is then ignored).")] = False,
) -> dict[str, Any]:
    """Look up the structured facts (L2) about one subject.

    Default: the facts valid now, or at the end of the day as_of. Returns {user, subject, as_of, facts},
    each fact with subject, predicate, object, status, valid_from, valid_to, confidence, version and its
    source (source_file, line_start, line_end, raw_ref for raw_read). A fact past its expiry (technical facts
    expire after 180 days) is still the user's last known value: it comes after the fresh ones with
    stale=true and stale_since (the date it may have become outdated); say so when you use it. A fact the user may
    have changed since, in words no rule read, has status `may_have_changed` with changed_on and the newer
    sentence (newer): not plainly current; say so. A sentence of the user's no rule read is kept as a statement
    (status `statement`, said_on): what they said that day. A fact a newer fact on the same topic replaced has
    status `earlier` with newer_on and the newer fact (newer): history, not current. `upcoming`: values
    that start later ("from April 1"), with their valid_from: not true yet.
    With history=true: {user, subject, versions}, every version with status `active` or `superseded`
    and how they link (previous_version, superseded_by).
    """
    from agentos_mem.query.facts import fact_history, facts_as_of  # lazy: the query stack, not before `initialize`
    from agentos_mem.query.rules import check_request
    if not subject or not subject.strip():
        return error("give a subject to look up, e.g. 'database port'")
    refusal = check_request(settings.home, subject)  # L0 first, as memory_query does
    if refusal is not None:
        return {"user": settings.user, "subject": subject, "facts": [], **refusal.as_dict()}
    if history:
        return fact_history(settings, subject)
    when = None
    if as_of:
        try:
            when = date.fromisoformat(as_of.strip())
        except ValueError:
            return error(f"as_of must be a date in the form YYYY-MM-DD, got {as_of!r}")
    out = facts_as_of(settings, when)
    aliases = load_aliases(Workspace(settings.home).knowledge / "99_system" / "subject_aliases.txt")
    key = subject_key(subject, aliases)
    return {"user": out["user"], "subject": subject, "as_of": out["as_of"], "facts": matching(out["facts"], key),
            "upcoming": matching(out["upcoming"], key)}


@tool("fact_forget", "Forget a fact", FORGET)
def fact_forget(
    settings: Settings,
    fact_id: Annotated[int, Field(ge=1, le=ROW_ID_MAX, description="The fact's id, as memory_query's items (source.fact) and fact_lookup give it.")],
    reason: Annotated[str, Field(description="Why, in the user's words, e.g. 'the user asked to forget it' or 'wrong: never said'. Kept with the fact.")] = "",
) -> dict[str, Any]:
    """Forget one fact of the user's memory, when the user asks you to forget it or says it is wrong.

    The fact is closed with the reason: never served again (not as current, outdated or history), and
    digesting the same conversation lines again does not bring it back. Nothing else changes; the user can
    still state it anew. Returns {fact: {id, subject, predicate, object, status: forgotten, closed_reason},
    cards_changed}. An unknown id (or one of another user) is an error.
    """
    from agentos_mem.query.facts import masked  # lazy: the query stack, not before `initialize`
    try:
        out = forget_fact(settings, settings.user, int(fact_id), reason)
    except (KeyError, ValueError) as e:
        return error(str(e).strip("'\""))
    except JournalUnwritable as e:  # a decision is journaled or not made: nothing changed
        return error(e.strerror)
    f = out["fact"]
    return {"fact": masked({k: f[k] for k in ("id", "subject", "predicate", "object", "status", "closed_reason", "valid_from", "valid_to",
                                            "source_file", "line_start", "line_end", "raw_ref")}), "cards_changed": out["cards_changed"]}
