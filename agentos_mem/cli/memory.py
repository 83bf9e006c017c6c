"""``agentos memory ...``: the user's memory records from the command line.

save / update / show / list / delete / recall work on one user's records (``--user`` or AGENTOS_USER);
``proposals`` lists what automatic extraction wanted to change and lets the user accept or reject it;
``extract`` runs the guarded automatic extraction over a host's message list (JSON or JSONL);
``clear`` deletes every record of a user: an admin command that asks for confirmation (no agent tool does this).
No Prefect here: these answer at once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentos_mem.cli.common import CliError, counted, emit, need_workspace, read_given_text, settings_from_args
from agentos_mem.kernel.domain import ROW_ID_MAX

COMMANDS = ("memory",)


def _book(args):
    # lazy: storage.memory_records (9 modules) stays off `agentos` start-up
    from agentos_mem.storage.memory_records import open_book

    settings = settings_from_args(args)
    need_workspace(settings)
    return settings, open_book(settings)


def _body(args) -> str | None:
    if getattr(args, "file", None):
        path = Path(args.file)
        if str(path) == "-":
            return sys.stdin.read()
        return read_given_text(path, "the body")
    return args.body


def _wrap(fn):
    """Turn the record errors a user can fix into one-line CLI errors (exit 2)."""

    def run(args) -> int:
        # lazy: storage.memory_records (9 modules); storage.memory_proposals (2 modules) stay off `agentos` start-up
        from agentos_mem.storage.memory_records import InvalidName, RecordError, RecordNotFound
        from agentos_mem.storage.memory_proposals import ProposalNotFound

        try:
            return fn(args)
        except (RecordError, InvalidName) as e:
            raise CliError(str(e)) from None
        except (RecordNotFound, ProposalNotFound) as e:
            raise CliError(str(e)) from None

    return run


def _print_record(rec: dict) -> None:
    print(f"{rec['name']}  [{rec['type']}, {rec['source']}]  recalled {rec['recallCount']}x"
          + (f", last {rec['lastRecalledAt']}" if rec.get("lastRecalledAt") else ""))
    print(f"  {rec['description']}")
    print(f"  created {rec['created']}, updated {rec['updated']}")
    for p in rec.get("problems") or []:
        print(f"  ! {p}")
    if rec.get("body"):
        print()
        print(rec["body"])


def cmd_save(args) -> int:
    settings, book = _book(args)
    rec = book.create(settings.user, args.name, args.description, args.type, _body(args) or "")
    emit(args, rec.as_dict(), lambda r: print("\n".join([f"saved memory {r['name']!r} ({r['type']}) for {settings.user}",
                                                           *(f"note: {n}" for n in r.get("notices", []))])))
    return 0


def cmd_update(args) -> int:
    settings, book = _book(args)
    rec = book.update(settings.user, args.name, description=args.description, type=args.type, body=_body(args))
    emit(args, rec.as_dict(), lambda r: print("\n".join([f"updated memory {r['name']!r} (source {r['source']}, recalled "
                                                           f"{r['recallCount']}x: kept)", *(f"note: {n}" for n in r.get("notices", []))])))
    return 0


def cmd_show(args) -> int:
    settings, book = _book(args)
    emit(args, book.read(settings.user, args.name).as_dict(), _print_record)
    return 0


def cmd_list(args) -> int:
    settings, book = _book(args)
    rows = [r.as_dict() for r in book.list(settings.user)]
    for r in rows:
        r.pop("body", None)
    for e in book.refused():
        print(f"agentos: skipped: {e}", file=sys.stderr)

    def render(rows):
        if not rows:
            print(f"no memories for {settings.user}")
        for r in rows:
            print(f"{r['type']:<9} {r['source']:<6} {r['recallCount']:>3}x  {str(r['updated'])[:16]:<16}  {r['name']}: {r['description']}")

    emit(args, rows, render)
    return 0


def cmd_delete(args) -> int:
    settings, book = _book(args)
    book.delete(settings.user, args.name)
    emit(args, {"deleted": args.name, "user": settings.user}, lambda o: print(f"deleted memory {o['deleted']!r}"))
    return 0


def cmd_recall(args) -> int:
    # lazy: the query stack (query.recall) stays off `agentos` start-up
    from agentos_mem.query.recall import recall

    settings, book = _book(args)
    res = recall(args.text, user=settings.user, settings=settings, book=book, limit=args.limit)
    # the transport counts the recall (the read path writes nothing); a file it cannot count in place is named
    for refused in book.mark_recalled(settings.user, res.names):
        print(f"agentos: {refused}", file=sys.stderr)

    def render(d):
        print(f"{d['status']}: {len(d['hits'])} memor{'y' if len(d['hits']) == 1 else 'ies'} (selector: {d['selector']})")
        for n in d.get("notices") or []:
            print(f"  note: {n}")
        for h in d["hits"]:
            print(f"\n## {h['name']}  [{h['type']}]  {h['description']}")
            if h.get("body"):
                print(h["body"])

    emit(args, {**res.as_dict(), "compact": res.compact()}, render)
    return 0 if res.status != "error" else 1


def cmd_proposals(args) -> int:
    settings, book = _book(args)
    if args.accept is not None:
        rec = book.accept(settings.user, args.accept)
        emit(args, rec.as_dict(), lambda r: print(f"accepted proposal {args.accept}: memory {r['name']!r} now reads: {r['description']}"))
        return 0
    if args.reject is not None:
        book.reject(settings.user, args.reject)
        emit(args, {"rejected": args.reject}, lambda o: print(f"rejected proposal {o['rejected']}; the memory is unchanged"))
        return 0
    rows = book.pending(settings.user)

    def render(rows):
        if not rows:
            print("no proposals waiting")
        for p in rows:
            target = f" -> {p['target']}" if p["target"] else ""
            print(f"#{p['id']} {p['kind']}{target}: {p['record'].get('description')}  ({p['reason']})")
        if rows:
            print("\naccept with `agentos memory proposals --accept ID`, reject with --reject ID")

    emit(args, rows, render)
    return 0


def _messages(path: Path) -> list[dict]:
    text = read_given_text(path, "messages")
    try:
        data = json.loads(text)
        msgs = data.get("messages") if isinstance(data, dict) else data
    except json.JSONDecodeError:
        msgs = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    msgs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise CliError(f"{path}:{i}: not JSON ({e.msg})") from None
    if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
        raise CliError(f"{path}: expected a list of messages ({{'role': ..., 'content': ...}}) or {{'messages': [...]}}")
    return msgs


def cmd_extract(args) -> int:
    # lazy: memory.extract pulls httpx: kept off `agentos` start-up
    from agentos_mem.memory.extract import extract

    settings, book = _book(args)
    report = extract(book, settings.user, _messages(Path(args.messages)), settings=settings)

    def render(r):
        if r.get("skipped"):
            print(f"nothing written: {r['skipped']}")
            return
        print(f"created {len(r['created'])}, updated {len(r['updated'])}, duplicates {len(r['duplicates'])}, "
              f"proposals {len(r['proposals'])}, dropped {len(r['dropped'])}  (extractor: {r['extractor']})")
        for e in r.get("errors") or []:
            print(f"  error (skipped): {e}")

    emit(args, report, render)
    return 0


def cmd_clear(args) -> int:
    settings, book = _book(args)
    n = len(book.names(settings.user))
    if not args.yes:
        if not sys.stdin.isatty():
            raise CliError("clear deletes every memory of the user: confirm with --yes (stdin is not a terminal)")
        answer = input(f"Delete all {n} memories of user {settings.user!r}? Type the user id to confirm: ")
        if answer.strip() != settings.user:
            print("not confirmed; nothing deleted")
            return 1
    deleted = book.clear(settings.user)
    emit(args, {"user": settings.user, "deleted": deleted}, lambda o: print(f"deleted {o['deleted']} memories of {o['user']}"))
    return 0


def add_parser(sub, name: str = "memory") -> None:
    """Register ``memory`` and its subcommands."""
    if name != "memory":
        raise ValueError(f"not a memory command: {name!r}")
    mem = sub.add_parser("memory", help="the user's memory records: save, update, show, list, delete, recall, proposals, clear",
                         description="user memory records (Markdown files with frontmatter), recall and automatic-extraction proposals")
    msub = mem.add_subparsers(dest="memory_command", required=True)

    def add(name, fn, help, *, user_required=False):
        sp = msub.add_parser(name, help=help, description=help)
        sp.set_defaults(fn=_wrap(fn))
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--user", required=user_required, help="user id" + ("" if user_required else " (default: AGENTOS_USER)"))
        return sp

    def body_args(sp):
        g = sp.add_mutually_exclusive_group()
        g.add_argument("--body", help="the full content (Markdown)")
        g.add_argument("--file", help="read the body from this file ('-': standard input)")

    types = ["user", "feedback", "project", "reference"]
    sp = add("save", cmd_save, "create a memory (refused when the name exists: use update)")
    sp.add_argument("name", help="record name (its file name; Chinese allowed; no '/', '..' or control characters)")
    sp.add_argument("--description", "-d", required=True, help="one line saying what the memory is (recall reads it first)")
    sp.add_argument("--type", "-t", required=True, choices=types, help="user: role and stable preferences; feedback: how the agent "
                    "should work; project: lasting project background; reference: where something lives")
    body_args(sp)
    sp = add("update", cmd_update, "change a memory's description, type or body (keeps its name, source and recall statistics)")
    sp.add_argument("name")
    sp.add_argument("--description", "-d")
    sp.add_argument("--type", "-t", choices=types)
    body_args(sp)
    sp = add("show", cmd_show, "one memory, in full")
    sp.add_argument("name")
    add("list", cmd_list, "the user's memories, most recently modified first")
    sp = add("delete", cmd_delete, "delete one memory")
    sp.add_argument("name")
    sp = add("recall", cmd_recall, "the memories relevant to TEXT (at most 5), chosen from the manifest of the 200 most recent")
    sp.add_argument("text", help="the request or conversation context, any language")
    sp.add_argument("--limit", type=counted(1, 5), help="at most this many (1-5, default AGENTOS_RECALL_LIMIT)")
    sp = add("proposals", cmd_proposals, "changes automatic extraction proposes (never applied without you)")
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--accept", type=counted(1, ROW_ID_MAX), metavar="ID", help="apply proposal ID")
    g.add_argument("--reject", type=counted(1, ROW_ID_MAX), metavar="ID", help="drop proposal ID (the memory stays as it is)")
    sp = add("extract", cmd_extract, "guarded automatic extraction over a task's messages (what an agent host calls at task end)")
    sp.add_argument("messages", help="JSON list (or {'messages': [...]}) or JSONL of {'role', 'content', 'tool_calls'?} messages")
    sp = add("clear", cmd_clear, "ADMIN: delete every memory of --user (asks you to type the user id; --yes skips it)", user_required=True)
    sp.add_argument("--yes", action="store_true", help="do not ask (scripts)")
