"""Personal data (issue 42, item 5): Chinese resident ID card numbers (GB 11643 check character), bank card numbers
(issuer prefix and Luhn) and mainland phone numbers (shape, at number boundaries) are masked by the one entry point,
each with a marker of its own, in Chinese text without spaces and in full-width digits; ordinary long numbers (order
numbers, timestamps, versions, dates, numbers whose check digit is wrong) stay. And every code of a list a cue
introduces, on its line or on the lines below it, not only the first."""

from __future__ import annotations

import pytest

from agentos_mem.safety.secrets import CLASSES, mask_lines, mask_text, mask_value, parse_policy, personal_spans, short_markers
from agentos_mem.safety.secrets.mask import locate_markers, repair_markers

REF = "alice/2026-11-20/r1/2026-11-20.md"


@pytest.fixture(autouse=True)
def _default_policy(monkeypatch, tmp_path):
    """The default setting, whatever the machine's environment says: no AGENTOS_PERSONAL_DATA, no settings file."""
    monkeypatch.delenv("AGENTOS_PERSONAL_DATA", raising=False)
    monkeypatch.setenv("AGENTOS_CONFIG", str(tmp_path / "absent.toml"))


# (text, the number that must go, its marker's label)
FOUND = [
    # ID cards: 18 characters with the MOD 11-2 check character (X too), whole or grouped, in running Chinese
    ("我的身份证号是11010519491231002X，记一下", "11010519491231002X", "ID card masked"),
    ("身份证：44030419900307123X", "44030419900307123X", "ID card masked"),
    ("id 44030419900307123x ok", "44030419900307123x", "ID card masked"),
    ("她的身份证 320102198511204566。", "320102198511204566", "ID card masked"),
    ("证件号 510104 20000229 0089", "510104 20000229 0089", "ID card masked"),  # 2000-02-29 exists
    ("身份证号码 110105491231002", "110105491231002", "ID card masked"),  # the 15-digit first generation, after its cue
    # bank cards: issuer prefix and Luhn, whole, in groups of four, with dashes
    ("工资卡卡号6222021234567890128，招商银行", "6222021234567890128", "bank card masked"),
    ("卡号 6222 0212 3456 7890 128 2025年到期", "6222 0212 3456 7890 128", "bank card masked"),
    ("Visa 4111-1111-1111-1111 expires 08/29", "4111-1111-1111-1111", "bank card masked"),
    ("card 5500 0000 0000 0004", "5500 0000 0000 0004", "bank card masked"),
    ("建行卡 4367421234567896", "4367421234567896", "bank card masked"),
    ("amex 378282246310005.", "378282246310005", "bank card masked"),
    ("农行卡6228480012345678903", "6228480012345678903", "bank card masked"),
    # phones: 1[3-9] and nine digits, +86 / 0086 / (+86), spaces or dashes between the groups
    ("手机13812345678", "13812345678", "phone masked"),
    ("我老婆的手机号是 +86 139-8765-4321，晚上打", "+86 139-8765-4321", "phone masked"),
    ("call 0086 158 0000 1111 after 6", "0086 158 0000 1111", "phone masked"),
    ("电话(+86)17712345678", "(+86)17712345678", "phone masked"),
    ("联系人：张三 18600001234；李四", "18600001234", "phone masked"),
    ("call me at 199-1234-5678.", "199-1234-5678", "phone masked"),
]


@pytest.mark.parametrize("text,number,label", FOUND)
def test_personal_numbers_are_masked_with_a_marker_of_their_class(text, number, label):
    out = mask_text(text, REF, 7)
    assert number not in out
    assert out == text.replace(number, f"[{label} · original at {REF} line 7]")


def test_chinese_text_without_spaces_and_full_width_digits():
    text = "我的身份证号是11010519491231002X，手机13812345678"
    assert mask_text(text) == "我的身份证号是[ID card masked]，手机[phone masked]"
    wide = "手机１３８１２３４５６７８，身份证１１０１０５１９４９１２３１００２Ｘ"
    assert mask_text(wide) == "手机[phone masked]，身份证[ID card masked]"
    assert mask_text("卡号６２２２ ０２１２ ３４５６ ７８９０ １２８") == "卡号[bank card masked]"


STAY = [
    # a wrong check character, a date that does not exist, a province that does not exist
    "身份证号 110105194912310021", "身份证号 110105194902300020", "身份证 991234199001011234",
    # 15 digits without an ID cue are not an old ID card
    "批次 110105491231002",
    # a wrong Luhn digit; Luhn-valid numbers no card scheme issues (a leading 1 or 9)
    "卡号 6222021234567890127", "ref 1234567890123452", "ref 9123456789012348",
    # order numbers, timestamps, snowflake ids, dates, times, versions, IPs
    "订单号 20241103123456789012", "订单号：202411031234567890", "时间戳 1732000000000", "ts=1732000000000000",
    "id 1859376512345678901", "2024-11-03 10:30:00", "20241103", "v2.13812345678", "version 3.11.2",
    "192.168.1.100", "uuid 123e4567-e89b-12d3-a456-426614174000", "价格 13812.45 元",
    # a phone's shape inside a longer run, after a dotted or dashed id, or not a mobile prefix
    "213812345678", "138123456789", "流水 2024-13812345678", "13812345678.5", "12812345678", "10086", "400-820-8820",
    "SN13812345678X", "https://live.staticflickr.com/381/13812345678_9683e023fc_z.jpg",
]


@pytest.mark.parametrize("text", STAY)
def test_ordinary_long_numbers_are_never_masked(text):
    assert mask_text(text) == text


def test_detectors_by_class():
    text = "身份证11010519491231002X 卡6222021234567890128 手机13812345678"
    spans = personal_spans(text, frozenset(CLASSES))
    assert [(text[s:e], kind) for s, e, kind in spans] == [
        ("11010519491231002X", "id_card"), ("6222021234567890128", "bank_card"), ("13812345678", "phone")]
    assert [k for _, _, k in personal_spans(text, frozenset({"phone"}))] == ["phone"]
    assert personal_spans(text, frozenset()) == []


def test_the_setting_values():
    assert parse_policy(None) == parse_policy("mask") == frozenset(CLASSES)
    assert parse_policy("keep") == frozenset()
    assert parse_policy("keep:phone,bank_card") == frozenset({"id_card"})
    assert parse_policy("nonsense") == parse_policy("keep:passport") == frozenset(CLASSES)  # never fails open


def test_keep_masks_nothing_and_keep_by_class_masks_the_rest(monkeypatch, tmp_path):
    text = "身份证11010519491231002X，卡6222021234567890128，手机13812345678"
    monkeypatch.setenv("AGENTOS_PERSONAL_DATA", "keep")
    assert mask_text(text) == text
    monkeypatch.setenv("AGENTOS_PERSONAL_DATA", "keep:phone")
    assert mask_text(text) == "身份证[ID card masked]，卡[bank card masked]，手机13812345678"
    # the settings file, as every setting: the environment wins over it
    monkeypatch.delenv("AGENTOS_PERSONAL_DATA")
    config = tmp_path / "agentos.toml"
    config.write_text('personal_data = "keep:id_card,bank_card"\n', encoding="utf-8")
    monkeypatch.setenv("AGENTOS_CONFIG", str(config))
    assert mask_text(text) == "身份证11010519491231002X，卡6222021234567890128，手机[phone masked]"
    monkeypatch.setenv("AGENTOS_PERSONAL_DATA", "bogus")  # a value the settings refuse masks every class
    assert mask_text(text) == "身份证[ID card masked]，卡[bank card masked]，手机[phone masked]"


def test_the_markers_of_personal_data_behave_as_secret_markers():
    once = mask_text("手机13812345678", REF, 3)
    assert mask_text(once, REF, 3) == once  # idempotent: a marker is never masked again
    assert short_markers(once) == "手机[phone masked]"
    assert locate_markers("手机[phone masked]", REF, 3) == once
    assert repair_markers("手机[phone masked · orig", REF, 3) == once
    # a fact's object: masked as text when its subject names no secret
    assert mask_value("手机号", "13812345678", REF, 3)[0] == f"[phone masked · original at {REF} line 3]"


# -- lists a cue introduces ------------------------------------------------------------------------------------
LISTS = [
    ("GitHub backup codes: 3f9a-21bc, 88d1-0e2f, 7c3b-9aa0", ["3f9a-21bc", "88d1-0e2f", "7c3b-9aa0"]),
    ("恢复码：48213907 59302148 11820374", ["48213907", "59302148", "11820374"]),
    ("恢复码是48213907、59302148和11820374，收好", ["48213907", "59302148", "11820374"]),
    ("recovery codes: 1. ab12-cd34 2. ef56-gh78 3. ij90-kl12", ["ab12-cd34", "ef56-gh78", "ij90-kl12"]),
    ("Google backup codes 1234 5678 2345 6789", ["1234", "5678", "2345", "6789"]),
]


@pytest.mark.parametrize("text,codes", LISTS)
def test_every_code_of_a_list_on_the_cues_line_is_masked(text, codes):
    out = mask_text(text)
    assert not [c for c in codes if c in out], out
    assert out.count("[secret masked]") == len(codes)


def test_a_list_stops_at_the_first_thing_that_is_not_a_code_of_its_make_up():
    assert mask_text("PIN 4821, 5 attempts left") == "PIN [secret masked], 5 attempts left"
    assert mask_text("验证码 483920，5分钟内有效") == "验证码 [secret masked]，5分钟内有效"
    assert mask_text("the password is hunter22, port 5432") == "the password is [secret masked], port 5432"


def test_a_cue_ending_its_line_introduces_the_codes_on_the_lines_below():
    text = "\n".join(["GitHub recovery codes:", "- 3f9a-21bc", "- 88d1-0e2f", "", "- 7c3b-9aa0 (used)", "Thanks, done 2024"])
    out, n = mask_lines(text, REF, 20)
    assert n == 3 and out.split("\n") == [
        "GitHub recovery codes:", f"- [secret masked · original at {REF} line 21]", f"- [secret masked · original at {REF} line 22]",
        "", f"- [secret masked · original at {REF} line 24] (used)", "Thanks, done 2024"]
    zh = mask_text("恢复码如下：\n1. 48213907\n2. 59302148\n3. 11820374")
    assert zh == "恢复码如下：\n1. [secret masked]\n2. [secret masked]\n3. [secret masked]"
    google = mask_text("Google backup codes:\n1234 5678  2345 6789\n３４５６ ７８９０")
    assert google == "Google backup codes:\n[secret masked] [secret masked]  [secret masked] [secret masked]\n[secret masked] [secret masked]"
    assert mask_text("## Recovery codes\n\nabcd-1234-efgh\nijkl-5678-mnop") == "## Recovery codes\n\n[secret masked]\n[secret masked]"


def test_lines_below_a_cue_that_are_not_codes_stay():
    for text in ("My password:\n- must be 12 chars\n- 2024", "I lost my recovery codes\n- 3f9a-21bc",
                 "Recovery codes:\n- 2024-11-03\n- 3f9a-21bc", "备份码如下：\n见密码本第3页"):
        assert mask_text(text) == text, text
