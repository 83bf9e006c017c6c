"""A card over an older conversation and a later fact or statement that updates what it told, or a claim and a later
conversation that changes it (issue 40, item 1): the later one is served just above the older, so an agent that trusts the top of its context reads the value that holds
now, and the card keeps its place right below (a "when did ..." question still finds it within a small budget). The
rule on hand-made items (``query.ask.newer_above``, ``query.threads.card_updated_by``); the same through
``agentos query`` is measured by ``agentos bench facts`` (first mention right) and ``agentos bench locomo``."""

from __future__ import annotations

from agentos_mem.query.ask import Item, newer_above
from agentos_mem.query.threads import Piece, card_piece


def _item(kind: str, uid: str, text: str) -> Item:
    return Item("L1" if kind == "card" else "L2", kind, uid, text, len(text.split()), {})


def _served(items: list[Item], pieces: dict, cards: dict) -> list[str]:
    return [i.id for i in newer_above(items, pieces, cards)]


def test_a_later_value_of_the_cards_kind_is_served_just_above_the_card():
    items = [_item("card", "card:a", "帮我看看测试机还能跑什么：测试机是 4C8G 的，系统盘 40G"),
             _item("fact", "fact:lunch", "团队午饭 · value · 面馆"),
             _item("fact", "fact:spec", "user · states · 测试机升级到 8C16G 了 (said on 2026-06-09)")]
    cards = {"card:a": card_piece({"date": "2026-06-02", "time": "10:00-10:05", "topic": "测试机", "summary": items[0].text})}
    pieces = {"fact:lunch": Piece(at="2026-06-10T12:00:00", text="团队午饭 面馆", claim=True, fact=True, subject="团队午饭", value="面馆"),
              "fact:spec": Piece(at="2026-06-09T09:00:00", text="测试机升级到 8C16G 了", fact=True, subject="user")}
    assert _served(items, pieces, cards) == ["fact:spec", "card:a", "fact:lunch"]  # the card right below; the rest keeps its place


def test_a_correction_later_in_the_same_conversation_counts_as_newer():
    items = [_item("card", "card:k", "Our Kafka cluster has 5 brokers and RF=3, how many partitions can it take?"),
             _item("fact", "fact:fix", "user · states · sorry, 7 brokers, not 5 (said on 2026-06-02)")]
    cards = {"card:k": card_piece({"date": "2026-06-02", "time": "10:00", "topic": "Kafka cluster", "summary": items[0].text})}
    pieces = {"fact:fix": Piece(at="2026-06-02T10:03:00", text="Kafka cluster sorry, 7 brokers, not 5", fact=True, subject="user")}
    assert _served(items, pieces, cards) == ["fact:fix", "card:k"]


def test_nothing_moves_for_an_older_item_a_word_alone_or_the_cards_own_value():
    card = _item("card", "card:k", "Our Kafka cluster has 5 brokers and RF=3")
    cards = {"card:k": card_piece({"date": "2026-06-02", "time": "10:00:00-10:30:00", "topic": "Kafka", "summary": card.text})}
    older = Piece(at="2026-05-20T09:00:00", text="Kafka cluster 3 brokers", fact=True, subject="user")
    word_only = Piece(at="2026-06-05T09:00:00", text="the Kafka cluster dashboard looks fine", fact=True, subject="user")
    same_value = Piece(at="2026-06-05T09:00:00", text="Kafka cluster still 5 brokers", fact=True, subject="user")
    for piece in (older, word_only, same_value):
        items = [card, _item("fact", "fact:x", piece.text)]
        assert _served(items, {"fact:x": piece}, cards) == ["card:k", "fact:x"], piece.text


def test_a_bare_number_of_the_same_shape_updates_a_card_no_type_names():
    # "1.28" alone is no typed version, but said after "Kubernetes 1.27" it is the same kind of value (digits as 9: 9.99)
    items = [_item("card", "card:k8s", "Our prod cluster is on Kubernetes 1.27, can pods resize in place?"),
             _item("fact", "fact:fix", "prod cluster · value · 1.28")]
    cards = {"card:k8s": card_piece({"date": "2026-06-02", "time": "10:00", "topic": "prod cluster", "summary": items[0].text})}
    pieces = {"fact:fix": Piece(at="2026-06-02T10:06:00", text="prod cluster 1.28", claim=True, fact=True,
                                subject="prod cluster", value="1.28")}
    assert _served(items, pieces, cards) == ["fact:fix", "card:k8s"]
    # a number of another shape, a date or a part of a name is no other value of it
    for text in ("prod cluster 12 nodes", "prod cluster upgraded on 2026-06-01", "prod cluster notes in runbook_1.28.md"):
        pieces = {"fact:fix": Piece(at="2026-06-02T10:06:00", text=text, fact=True, subject="user")}
        assert _served(items, pieces, cards) == ["card:k8s", "fact:fix"], text


def test_a_later_conversation_that_changes_a_claim_is_served_above_it():
    # the claim still says 6379; a later chat tells of the move (naming the old port too): the chat goes first
    items = [_item("fact", "fact:port", "staging Redis 端口 · value · 6379"),
             _item("card", "card:new", "staging 的 Redis 换到 6380 了，6379 留给旧的队列服务")]
    pieces = {"fact:port": Piece(at="2026-06-02T21:00:00", text="staging Redis 端口 6379", claim=True, fact=True,
                                 subject="staging Redis 端口", value="6379")}
    cards = {"card:new": card_piece({"date": "2026-06-20", "time": "22:10-22:15", "topic": "staging Redis", "summary": items[1].text})}
    assert _served(items, pieces, cards) == ["card:new", "fact:port"]
    # a later chat that only names the claim's value again, or an earlier one, moves nothing
    for date, summary in (("2026-06-20", "staging Redis 6379 又满了"), ("2026-05-20", "staging 的 Redis 从 6378 换到 6379")):
        cards = {"card:new": card_piece({"date": date, "time": "22:10", "topic": "staging Redis", "summary": summary})}
        assert _served(items, pieces, cards) == ["fact:port", "card:new"], summary


def test_an_amount_in_chinese_numerals_updates_a_card_as_digits_would():
    items = [_item("card", "card:bk", "数据库备份保留三个月，放在冷存储里，够不够合规？"),
             _item("fact", "fact:new", "user · states · 备份策略改了，现在只保留两周 (said on 2026-06-20)")]
    cards = {"card:bk": card_piece({"date": "2026-06-02", "time": "10:00", "topic": "数据库备份", "summary": items[0].text})}
    pieces = {"fact:new": Piece(at="2026-06-20T09:00:00", text="备份策略改了，现在只保留两周", fact=True, subject="user")}
    assert _served(items, pieces, cards) == ["fact:new", "card:bk"]
