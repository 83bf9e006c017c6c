"""``agentos kb ...``: the knowledge base's review and publishing from the command line.

Every command is the current user's view (``--user`` or AGENTOS_USER): system documents and their own personal
ones, never another user's personal document (not even its title: its id reads as unknown).
``kb pending`` lists what waits (``--json``: items whose ``id`` the other commands take); ``kb approve ID``
and ``kb reject ID`` decide as the current user (``--user``; system documents need an admin, personal ones
their owner); ``kb show ID`` prints one document with its review; ``kb list`` what the user may retrieve;
``kb map / search / outline / read / ask`` read the published documents. No Prefect here (``agentos refine``,
in cli.knowledge, runs the ``inbox-refine`` flow).
"""

from __future__ import annotations

import sys

from agentos_mem.cli.common import CliError, counted, emit, start_service_if_asked, workspace_settings

COMMANDS = ("kb",)


def cmd_pending(args) -> int:
    # lazy: knowledge.decisions (32 modules) stays off `agentos` start-up
    from agentos_mem.knowledge.decisions import pending

    settings = workspace_settings(args)
    rows = pending(settings, settings.user if args.mine else None, viewer=settings.user)  # never another user's personal ones

    def render(rows):
        if not rows:
            print("no documents waiting for review")
        for d in rows:
            print(f"{d['id']}  [{d['scope']}, {d['owner']}] {d['title']}")
            print(f"    {d['category']} · {d['version_rule']} · reliability {d['reliability']} · {d['nature']}"
                  f"{' · until ' + d['valid_until'] if d['valid_until'] else ''}"
                  f"{' · ' + str(d['fact_candidates']) + ' fact candidates' if d.get('fact_candidates') else ''}"
                  f"{' (' + str(d['conflicts']) + ' conflicting)' if d['conflicts'] else ''}")
            if d["summary"]:
                print(f"    {d['summary']}")
        if rows:
            print("\ndecide with `agentos kb approve ID` or `agentos kb reject ID`")

    emit(args, rows, render)
    return 0


def _decide(args, decision: str) -> int:
    # lazy: knowledge.decisions (32 modules); storage.kb_store (4 modules) stay off `agentos` start-up
    from agentos_mem.knowledge.decisions import NotAllowed, decide
    from agentos_mem.storage.kb_store import DocumentNotFound

    settings = workspace_settings(args)
    try:
        out = decide(settings, args.id, decision, settings.user, args.note)
    except (NotAllowed, DocumentNotFound, ValueError) as e:
        raise CliError(str(e)) from None
    emit(args, out, _render_decided)
    return 0


def _render_decided(d: dict) -> None:
    print(f"{d['id']} is now {d['status']}")
    v = d.get("vectors")
    if v is None:
        return
    if v.get("error"):
        print(f"  its sections have no vectors yet ({v['error']}): search finds them by keywords until `agentos rebuild` "
              "or the nightly embeds them")
    elif v["sections"]:
        more = f", and {v['sentences_embedded']} of their sentences" if v.get("sentences_embedded") else ""
        print(f"  {v['sections']} section(s) ready for search ({v['embedded']} embedded now{more})")


def cmd_approve(args) -> int:
    return _decide(args, "approve")


def cmd_reject(args) -> int:
    return _decide(args, "reject")


def cmd_show(args) -> int:
    # lazy: knowledge.decisions (32 modules); storage.kb_store (4 modules) stay off `agentos` start-up
    from agentos_mem.knowledge.decisions import show
    from agentos_mem.storage.kb_store import DocumentNotFound

    settings = workspace_settings(args)
    try:
        doc = show(settings, args.id, settings.user)  # another user's personal document reads as an unknown id
    except DocumentNotFound as e:
        raise CliError(str(e)) from None

    def render(d):
        r = d["review"] or {}
        print(f"{d['id']}  {d['title']}\n  {d['status']} · {d['scope']} ({d['owner']}) · {d['category']} · v{d['version']}")
        print(f"  source: {d['source_url'] or d['source']} · reliability {d['reliability']} ({(r.get('reliability') or {}).get('why', '')})")
        print(f"  nature {d['nature']} · valid until {d['valid_until'] or 'no expiry'} ({(r.get('validity') or {}).get('why', '')})")
        c = r.get("consistency") or {}
        counts = f"{c.get('identical', 0)} identical, {c.get('added', 0)} new, {c.get('conflicts', 0)} conflict(s)"
        if d.get("fact_candidates"):
            print(f"  facts: {len(d['fact_candidates'])} fact candidates, written only if approved (today: {counts})")
        elif "applied" in c:
            print(f"  facts: {c['applied']} applied on approval ({counts})")
        elif "dropped" in c:
            print(f"  facts: {c['dropped']} fact candidates dropped on rejection (none written)")
        elif (c.get("legacy_settled") or {}).get("retired") is not None:  # refined before facts waited for review
            print(f"  facts: written when refined by an earlier version, taken back ({c['legacy_settled']['retracted']} retracted)")
        elif c.get("fact_ids"):  # refined before facts waited for review: written when refined
            print(f"  facts: written when refined, before review ({counts}; fact ids {', '.join(map(str, c['fact_ids']))})")
        else:
            print("  facts: no fact candidates")
        if d["previous_version"]:
            print(f"  previous version: {d['previous_version']}")
        if d["related"]:
            print(f"  related: {', '.join(d['related'])}")
        print(f"  summary: {d['summary'] or '(none yet' + (': ' + d['summary_error'] if d['summary_error'] else '') + ')'}")
        print(f"  sections: {len(d['outline'])} · file: 03_knowledge/{d['path']}")

    emit(args, doc, render)
    return 0


def cmd_list(args) -> int:
    # lazy: knowledge.decisions (32 modules) stays off `agentos` start-up
    from agentos_mem.knowledge.decisions import visible

    settings = workspace_settings(args)
    rows = visible(settings, settings.user, include_expired=args.expired)
    emit(args, rows, lambda rows: [print(f"{d['id']}  [{d['scope']}] {d['category']}  {d['title']}") for d in rows] or print("no ready documents"))
    return 0


def _kb_call(fn):
    # lazy: the query stack (query.kb) stays off `agentos` start-up
    from agentos_mem.query.kb import KBQueryError

    try:
        return fn()
    except KBQueryError as e:
        raise CliError(str(e)) from None


def cmd_map(args) -> int:
    # lazy: the query stack (query.kb) stays off `agentos` start-up
    from agentos_mem.query.kb import doc_map

    settings = workspace_settings(args)
    rows = _kb_call(lambda: doc_map(settings, settings.user, selection=args.selection))

    def render(rows):
        if not rows:
            print("no published documents in your selected knowledge")
        for d in rows:
            print(f"{d['id']}  [{d['scope']}] {d['category']}  {d['title']}  ({d['sections']} sections, ~{d['tokens']} tokens)")
            if d.get("summary"):
                print(f"    {d['summary']}")

    emit(args, rows, render)
    return 0


def cmd_search(args) -> int:
    settings = workspace_settings(args)
    # --json: {query, mode, hits, sections, without_vectors, notice}, the MCP tool kb_search's fields
    found = None if args.in_process else _search_by_service(settings, args)
    if found is None:
        # lazy: the query stack (query.kb) stays off `agentos` start-up
        from agentos_mem.query.kb import search

        found = _kb_call(lambda: search(settings, settings.user, args.query, selection=args.selection, k=args.k, mode=args.mode))

    def render(found):
        if found["notice"]:
            print(f"note: {found['notice']}")
        if not found["hits"]:
            print("no section matches")
        for h in found["hits"]:
            print(f"{h['score']:.3f}  {h['doc_id']}#{h['anchor']}  {h['title']} › {h['section']}  (lines {h['lines'][0]}-{h['lines'][1]})")
            print(f"    {h['snippet']}")

    emit(args, found, render)
    return 0


def _search_by_service(settings, args) -> dict | None:
    """The search answered by the workspace's warm query service (the same answer, without a fresh process's
    registry read and index build), or None when none answers for this workspace and these settings."""
    # lazy: mcp_server.local_service (4 modules) stays off `agentos` start-up
    from agentos_mem.mcp_server.local_service import Refused, Unavailable, kb_search_service

    try:
        return kb_search_service({"user": settings.user, "query": args.query, "selection": args.selection, "k": args.k, "mode": args.mode},
                                 home=settings.home)["answer"]
    except Refused as e:
        raise CliError(str(e)) from None
    except Unavailable as e:
        if e.notice:  # a service that stalled: searched here instead
            print(f"agentos: {e.notice}", file=sys.stderr)
        if e.none_running:
            start_service_if_asked()
        return None


def cmd_outline(args) -> int:
    # lazy: the query stack (query.kb) stays off `agentos` start-up
    from agentos_mem.query.kb import read_doc

    settings = workspace_settings(args)
    doc = _kb_call(lambda: read_doc(settings, settings.user, args.id, selection=args.selection))
    emit(args, doc, lambda d: (print(f"{d['id']}  {d['title']}"), print(d["outline_text"])))
    return 0


def cmd_read(args) -> int:
    # lazy: the query stack (query.kb) stays off `agentos` start-up
    from agentos_mem.query.kb import read_section

    settings = workspace_settings(args)
    page = _kb_call(lambda: read_section(settings, settings.user, args.id, args.anchor, cursor=args.cursor, page_tokens=args.page_tokens,
                                         subtree=args.subtree, selection=args.selection))

    def render(p):
        print(f"{p['title']} › {p['section']}  page {p['page']}/{p['pages']}  lines {p['lines'][0]}-{p['lines'][1]}\n")
        print(p["text"])
        if p["subsections"]:
            print("\nsubsections: " + ", ".join(f"{s['title']} (#{s['anchor']})" for s in p["subsections"]))
        if p["next_cursor"]:
            print(f"\nnext page: agentos kb read {p['doc_id']} {p['anchor']} --cursor {p['next_cursor']}")

    emit(args, page, render)
    return 0


def cmd_ask(args) -> int:
    # lazy: the query stack (query.kb_answer) stays off `agentos` start-up
    from agentos_mem.query.kb_answer import answer

    settings = workspace_settings(args)
    out = _kb_call(lambda: answer(settings, settings.user, args.question, selection=args.selection, budget=args.budget))

    def render(a):
        print(f"[{a['status']}] ({a['method']}, {a['sections_read']} section(s), {a['tokens']} tokens)")
        if a.get("answer"):
            print(a["answer"])
        if a.get("missing") and a["missing"] not in (a.get("answer") or ""):
            print(f"missing: {a['missing']}")
        for c in a.get("citations") or []:
            print(f"  - {c['title']} › {c['section']} ({c['doc_id']}#{c['anchor']})")
        if a.get("notice"):
            print(f"note: {a['notice']}")

    emit(args, out, render)
    return 0


def add_parser(sub, name: str = "kb") -> None:
    """Register ``kb`` and its subcommands."""
    if name != "kb":
        raise ValueError(f"not a kb command: {name!r}")
    kb = sub.add_parser("kb", help="knowledge documents: pending, approve, reject, show, list, map, search, outline, read, ask",
                        description="review and publish knowledge documents (only ready documents are retrieved)")
    ksub = kb.add_subparsers(dest="kb_command", required=True)

    def kadd(name, fn, help):
        sp = ksub.add_parser(name, help=help, description=help)
        sp.set_defaults(fn=fn)
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--user", help="who you are (default: AGENTOS_USER): admins decide system documents, owners personal ones")
        return sp

    sp = kadd("pending", cmd_pending, "documents waiting for review that you may see: system ones and your own personal ones "
                                      "(the id column is what approve/reject take)")
    sp.add_argument("--mine", action="store_true", help="only those you may decide")
    for cmd, fn, verb in (("approve", cmd_approve, "publish a pending document (status ready)"),
                          ("reject", cmd_reject, "reject a pending document (kept, marked rejected)")):
        sp = kadd(cmd, fn, verb)
        sp.add_argument("id", help="a document id, as `agentos kb pending --json` gives it")
        sp.add_argument("--note", help="a note kept with the decision")
    sp = kadd("show", cmd_show, "one document: status, review, versions, summary")
    sp.add_argument("id")
    sp = kadd("list", cmd_list, "the ready documents you may retrieve")
    sp.add_argument("--expired", action="store_true", help="include documents past their valid_until")

    def selection(sp):
        sp.add_argument("--selection", help="a knowledge selection (99_system/selections/<name>.yaml); default: every published document you may see")

    sp = kadd("map", cmd_map, "the document map: title, scope, summary and size of each document you may read")
    selection(sp)
    sp = kadd("search", cmd_search, "search sections (Chinese characters and bigrams, English words; \"quoted phrases\" match exactly)")
    sp.add_argument("query")
    sp.add_argument("--k", type=counted(), default=10, help="how many sections (default 10)")
    sp.add_argument("--mode", choices=["hybrid", "bm25", "dense"], default="hybrid", help="keyword, meaning or both (default)")
    sp.add_argument("--in-process", action="store_true",
                    help="search in this process even when a warm query service (agentos serve / mcp) runs for the workspace")
    selection(sp)
    sp = kadd("outline", cmd_outline, "a document's outline with section anchors and sizes")
    sp.add_argument("id")
    selection(sp)
    sp = kadd("read", cmd_read, "one bounded page of a section by anchor (--cursor for the next page)")
    sp.add_argument("id")
    sp.add_argument("anchor")
    sp.add_argument("--cursor", help="the next_cursor of the previous page")
    sp.add_argument("--page-tokens", type=counted(), default=400, help="page size in tokens (default 400)")
    sp.add_argument("--subtree", action="store_true", help="include the subsections' text")
    selection(sp)
    sp = kadd("ask", cmd_ask, "answer from the published knowledge with cited sections, or say what it does not cover")
    sp.add_argument("question")
    sp.add_argument("--budget", type=counted(), default=1200, help="tokens of sections read at most (default 1200)")
    selection(sp)
