"""One suite for every record backend (files, SQLite) and the record semantics above them."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from agentos_mem.storage.memory_records import (ManualRecordProtected, MemoryBook, RecordError, RecordExists, parse, render)
from agentos_mem.storage.memory_proposals import ProposalStore
from agentos_mem.storage.memory_store import FileRecordStore, InvalidName, RecordNotFound, SqliteRecordStore, name_problem


@pytest.fixture(params=["files", "sqlite"])
def store(request, tmp_path):
    if request.param == "files":
        yield FileRecordStore(tmp_path / "records")
        return
    s = SqliteRecordStore(tmp_path / "records.db")
    yield s
    s.close()


@pytest.fixture
def book(store, tmp_path):
    return MemoryBook(store, proposals=ProposalStore(tmp_path / "proposals.db"), lock_dir=tmp_path / "locks")


# -- the narrow interface -----------------------------------------------------------------------------------
def test_store_round_trip_list_and_delete(store):
    store.write("alice", "周报格式", "正文")
    store.write("alice", "editor", "vim")
    assert store.read("alice", "周报格式") == "正文"
    assert sorted(e.name for e in store.list("alice")) == ["editor", "周报格式"]
    store.delete("alice", "editor")
    assert [e.name for e in store.list("alice")] == ["周报格式"]
    with pytest.raises(RecordNotFound):
        store.read("alice", "editor")
    with pytest.raises(RecordNotFound):
        store.delete("alice", "editor")
    assert store.list("nobody") == []


def test_store_write_order_is_the_modification_order(store):
    for name in ["a", "b", "c"]:
        store.write("u", name, name)
    store.write("u", "a", "again")
    newest = max(store.list("u"), key=lambda e: e.mtime_ns)
    assert newest.name == "a"


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "a\\b", "/etc/passwd", "..", ".", ".hidden", "~root", "x\x00y", "tab\there",
                                 "new\nline", "C:evil", "a" * 101, " padded", "trailing.", "con", "zero\u200bwidth"])
def test_bad_names_are_refused_before_any_read_or_write(store, bad):
    with pytest.raises(InvalidName):
        store.write("alice", bad, "x")
    with pytest.raises(InvalidName):
        store.read("alice", bad)
    with pytest.raises(InvalidName):
        store.list(bad)
    assert store.list("alice") == []


@pytest.mark.parametrize("good", ["周报格式", "偏好-咖啡", "user role", "2026 计划 v2", "a" * 100, "naïve café"])
def test_chinese_and_ordinary_names_are_allowed(store, good):
    assert name_problem(good) is None
    store.write("张三", good, "x")
    assert store.read("张三", good) == "x"


def test_file_backend_keeps_one_obsidian_file_per_record(tmp_path):
    store = FileRecordStore(tmp_path / "records")
    book = MemoryBook(store)
    book.create("alice", "周报格式", "以后所有周报都用简洁格式", "feedback", "不超过一页。")
    path = tmp_path / "records" / "alice" / "周报格式.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nname: 周报格式\n") and "type: feedback" in text and text.rstrip().endswith("不超过一页。")
    (tmp_path / "records" / "alice" / "notes.txt").write_text("not a record")  # a stray file is not a record
    assert book.names("alice") == ["周报格式"]


# -- cross-user isolation: a property test over arbitrary names ---------------------------------------------
_names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=30)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_names)
def test_no_name_reaches_another_users_records(tmp_path, name):
    for store in (FileRecordStore(tmp_path / "records"), SqliteRecordStore(tmp_path / "records.db")):
        store.write("bob", "secret", "bob's secret")
        try:
            store.write("alice", name, "alice wrote this")
        except InvalidName:
            assert name_problem(name) is not None
        else:
            assert name_problem(name) is None
            assert store.read("alice", name) == "alice wrote this"
        assert store.read("bob", "secret") == "bob's secret"
        assert [e.name for e in store.list("bob")] == ["secret"]
        for op in (lambda: store.read("alice", name), lambda: store.delete("alice", name)):
            try:
                op()
            except (InvalidName, RecordNotFound):
                pass
        assert store.read("bob", "secret") == "bob's secret"
        if isinstance(store, FileRecordStore):  # nothing was written outside the users' folders
            stray = [p for p in (tmp_path / "records").rglob("*") if p.is_file() and p.parent.parent != tmp_path / "records"]
            assert stray == []
            assert not any(p.name != "records" and p.name != "records.db" and not p.name.startswith("records.db")
                           for p in tmp_path.iterdir())
        else:
            store.close()


# -- create / update semantics --------------------------------------------------------------------------------
def test_create_refuses_an_existing_name(book):
    book.create("alice", "editor", "uses vim", "user")
    with pytest.raises(RecordExists):
        book.create("alice", "editor", "uses emacs", "user")
    assert book.read("alice", "editor").description == "uses vim"
    book.create("bob", "editor", "uses emacs", "user")  # another user's namespace
    assert book.read("bob", "editor").description == "uses emacs"


def test_names_are_measured_in_utf8_bytes_not_characters(book):
    """A file name holds 255 bytes: 100 Chinese characters (300 bytes) are refused up front with the reason, on
    both backends alike, and never leak a temporary path; 80 fit."""
    with pytest.raises(InvalidName, match="300 bytes in UTF-8"):
        book.create("alice", "备" * 100, "太长的名字", "user")
    assert book.names("alice") == []
    rec = book.create("alice", "备" * 80, "刚好放得下", "user")
    assert book.read("alice", rec.name).description == "刚好放得下"


@pytest.mark.parametrize("other", ["coffee", "COFFEE", "ｃｏｆｆｅｅ", "Ｃｏｆｆｅｅ"])
def test_names_differing_only_in_case_or_width_are_one_record(book, other):
    book.create("alice", "Coffee", "morning coffee", "user", "flat white")
    with pytest.raises(RecordExists, match="as 'Coffee'"):
        book.create("alice", other, "again", "user")
    assert book.read("alice", other).body == "flat white" and book.exists("alice", other)
    book.update("alice", other, body="long black")
    assert book.names("alice") == ["Coffee"] and book.read("alice", "Coffee").body == "long black"
    book.delete("alice", other)
    assert book.names("alice") == []


def test_nfd_and_nfc_spellings_are_one_record_stored_as_nfc(book):
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Café notes")
    book.create("alice", nfd, "a café", "reference")
    assert book.names("alice") == ["Café notes"]  # canonically the same text, one spelling on disk
    with pytest.raises(RecordExists):
        book.create("alice", "Café notes", "again", "reference")
    assert book.read("alice", nfd).name == "Café notes"
    assert book.free_name("alice", "CAFÉ NOTES") == "CAFÉ NOTES-2"


def test_update_keeps_name_source_created_and_recall_statistics(book, monkeypatch):
    created = book.create("alice", "周报格式", "以后所有周报都用简洁格式", "feedback", "v1")
    book.mark_recalled("alice", ["周报格式"])
    book.mark_recalled("alice", ["周报格式"])
    recalled = book.read("alice", "周报格式")
    assert recalled.recall_count == 2 and recalled.last_recalled_at
    monkeypatch.setenv("AGENTOS_NOW", "2026-11-30T10:00:05+08:00")  # five seconds later (the suite pins the clock at 10:00)
    book.update("alice", "周报格式", description="以后所有周报和月报都用简洁格式", body="v2")
    after = book.read("alice", "周报格式")
    assert (after.name, after.source, after.created) == ("周报格式", "manual", created.created)
    assert (after.recall_count, after.last_recalled_at) == (2, recalled.last_recalled_at)
    assert after.description == "以后所有周报和月报都用简洁格式" and after.body == "v2" and after.updated > created.updated
    assert book.names("alice") == ["周报格式"]


def test_update_of_a_missing_record_is_an_error_not_a_create(book):
    with pytest.raises(RecordNotFound):
        book.update("alice", "nothing", body="x")
    assert book.names("alice") == []


def test_source_comes_from_the_path_that_writes(book):
    book.create("alice", "m1", "manual memory", "user")
    book.auto_create("alice", "a1", "auto memory", "user")
    assert book.read("alice", "m1").source == "manual" and book.read("alice", "a1").source == "auto"
    book.update("alice", "a1", body="the user edited it")  # the user's edit keeps the provenance it had
    assert book.read("alice", "a1").source == "auto"
    with pytest.raises(ManualRecordProtected):
        book.auto_update("alice", "m1", body="clobber")
    assert book.read("alice", "m1").body == ""


def test_frontmatter_in_a_body_cannot_forge_the_source(book):
    book.create("alice", "forged", "a body that looks like frontmatter", "user", "---\nsource: auto\nrecallCount: 99\n---\nhello")
    rec = book.read("alice", "forged")
    assert rec.source == "manual" and rec.recall_count == 0 and "source: auto" in rec.body


@pytest.mark.parametrize("kwargs, field", [
    ({"description": ""}, "description"), ({"description": "two\nlines"}, "one line"), ({"description": "x" * 201}, "description"),
    ({"type": "secret"}, "type"),
])
def test_bad_fields_are_refused_with_the_field_named(book, kwargs, field):
    args = {"description": "ok", "type": "user", **kwargs}
    with pytest.raises(RecordError, match=field):
        book.create("alice", "m", args["description"], args["type"], "")
    assert book.names("alice") == []


def test_delete_one_and_clear_all(book):
    for n in ["a", "b", "c"]:
        book.create("alice", n, f"memory {n}", "user")
    book.create("bob", "a", "bob's", "user")
    book.delete("alice", "b")
    assert sorted(book.names("alice")) == ["a", "c"]
    assert book.clear("alice") == 2
    assert book.names("alice") == [] and book.names("bob") == ["a"]


def test_manifest_is_the_200_most_recent(book):
    for i in range(205):
        book.store.write("alice", f"m{i:03d}", render(parse(f"m{i:03d}", f"---\ndescription: memory {i}\ntype: user\n---\nbody {i}")))
    manifest = book.manifest("alice")
    assert len(manifest) == 200
    assert {m["name"] for m in manifest} == {f"m{i:03d}" for i in range(5, 205)}
    assert set(manifest[0]) == {"name", "type", "updated", "description"}
    book.update("alice", "m000", body="touched")
    assert book.manifest("alice")[0]["name"] == "m000"


# -- files edited by hand ------------------------------------------------------------------------------------
def test_broken_frontmatter_is_read_as_plain_markdown_and_kept(book):
    text = "---\nname: [unclosed\ndescription: oops\n---\n# 我的笔记\n内容"
    book.store.write("alice", "hand", text)
    rec = book.read("alice", "hand")
    assert rec.problems and "plain Markdown" in rec.problems[0]
    assert "内容" in rec.body and rec.source == "manual"
    assert book.store.read("alice", "hand") == text  # reading never rewrites the file


def test_keys_added_by_hand_survive_an_update(book):
    book.store.write("alice", "tagged", "---\nname: tagged\ndescription: d\ntype: user\ntags: [work, 周报]\n---\nbody")
    book.update("alice", "tagged", body="new body")
    rec = book.read("alice", "tagged")
    assert rec.extra == {"tags": ["work", "周报"]} and rec.body == "new body"


def test_proposals_wait_for_the_user_and_accepting_applies_them(book):
    book.create("alice", "coffee", "likes coffee", "user", "black")
    pid, new = book.propose("alice", "update", "coffee", {"description": "likes tea", "type": "user", "body": "green"}, "manual record")
    again, new2 = book.propose("alice", "update", "coffee", {"description": "likes tea", "type": "user", "body": "green"}, "manual record")
    assert new and not new2 and again == pid
    assert book.read("alice", "coffee").description == "likes coffee"
    assert [p["id"] for p in book.pending("alice")] == [pid] and book.pending("bob") == []
    rec = book.accept("alice", pid)
    assert rec.description == "likes tea" and rec.source == "manual"
    assert book.pending("alice") == []
    with pytest.raises(RecordError):
        book.accept("alice", pid)
