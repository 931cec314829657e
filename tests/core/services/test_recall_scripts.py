"""Memory in other scripts: Chinese, Japanese and Korean without spaces, Hindi and Thai
with their vowel signs, accents typed or not. Each is found by a search in its own
words, as an English note is."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.services.recall import marks
from memwork.core.services.recall.words import length_share, terms, words
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "我昨天去了北京看我的奶奶",
    "明天要在上海开会讨论预算",
    "東京で新しいプロジェクトを始めました",
    "서울에서 친구를 만났어요",
    "मैंने आज नई किताब पढ़ी",
    "สวัสดีครับ วันนี้อากาศดี",
    "我的猫很可爱",
    "Met with the Berlin team about the café budget",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("北京", "我昨天去了北京看我的奶奶"),
        ("奶奶住在哪里？", "我昨天去了北京看我的奶奶"),
        ("上海的预算", "明天要在上海开会讨论预算"),
        ("プロジェクト", "東京で新しいプロジェクトを始めました"),
        ("서울", "서울에서 친구를 만났어요"),
        ("猫", "我的猫很可爱"),  # one character, a whole word
        ("किताब", "मैंने आज नई किताब पढ़ी"),
        ("อากาศ", "สวัสดีครับ วันนี้อากาศดี"),
        ("cafe", "Met with the Berlin team about the café budget"),
    ],
)
def test_a_note_in_any_script_is_found_by_its_own_words(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected


def test_english_is_cut_as_before() -> None:
    text = "The canary for billing-api went green after 3 retries; deploying v2.1 now."
    # (Two words joined by a hyphen are also the compound: see test_recall_compounds.)
    assert words(text) == ["canary", "billing", "api", "billingapi", "went", "green", "3"] + [
        "retries",
        "deploying",
        "v2",
        "1",
    ]
    assert terms("deploying deployed deploys") == ["deploy", "deploy", "deploy"]


def test_a_spaceless_run_gives_its_pairs_and_ideographs_alone() -> None:
    assert words("去了北京") == ["去", "去了", "了", "了北", "北", "北京", "京"]
    assert words("API接口") == ["api", "接", "接口", "口"]  # a Latin word stops at Han
    # Thai letters alone mean little: only the pairs.
    assert words("อากาศ") == ["อา", "าก", "กา", "าศ"]


def test_marks_stay_in_their_words_and_optional_ones_fold_away() -> None:
    assert words("मैंने आज नई किताब पढ़ी") == ["मैंने", "आज", "नई", "किताब", "पढ़ी"]
    decomposed = "cafe\u0301"
    assert words(decomposed) == words("café") == words("cafe") == ["cafe"]
    assert words("שָׁלוֹם") == words("שלום")  # Hebrew points are optional
    assert words("בֵּית־סֵפֶר") == ["בית", "ספר"]  # its maqaf is a hyphen, not a point
    assert words("Pokémon Ünïcödé") == ["pokemon", "unicode"]
    assert words("Straße") == words("STRASSE") == ["strasse"]
    # Full-width forms, common in Chinese and Japanese text, and ligatures.
    assert words("ＡＰＩ接口") == words("API接口") == ["api", "接", "接口", "口"]
    assert words("ﬁle ２０２３") == ["file", "2023"]


def test_only_single_ideographs_count_towards_length() -> None:
    counted = [t for t in words("我去了北京") if length_share(t)]
    assert counted == ["我", "去", "了", "北", "京"]
    assert all(length_share(t) for t in words("สวัสดีครับ deploy"))


def test_the_marks_table_matches_this_python() -> None:
    table = marks.ranges()
    listed = {cp for first, last in table for cp in range(first, last + 1)}
    for cp in listed:
        assert unicodedata.category(chr(cp)).startswith("M"), hex(cp)
    if unicodedata.unidata_version == "14.0.0":  # the version the table was written from
        every = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)).startswith("M")}
        assert listed == every


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_cut_without_fail_and_alike_in_either_unicode_form(text: str) -> None:
    """Whatever a record holds, cutting it never fails, gives no empty term, and a text
    typed composed or decomposed ("é" or "e" and an accent) gives the same terms."""
    found = terms(text)
    assert all(found)
    assert terms(unicodedata.normalize("NFD", text)) == terms(unicodedata.normalize("NFC", text))
