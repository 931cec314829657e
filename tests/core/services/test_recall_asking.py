"""Which notes only ask (core/services/recall/asking.py): the rule recall lowers by."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.asking import only_asks


@pytest.mark.parametrize(
    "text",
    [
        "Can you recommend an authentic Italian restaurant in Rome?",
        "Hey Mel! Good to see you! How have you been?",  # a greeting leads it
        "Which one is best? And how far is it from the station?",
        "Did the 2.5 release fix it?",  # a decimal point ends no sentence
        "So... what did you end up doing?",  # nor does an ellipsis
        "Did Dr. Patel say anything about it?",
        "你上周去哪里了？",
        "  What did you paint?  ",
        "When would you ever share it? 👀",  # what a chat puts after the mark
        "How could I forget?!",
    ],
)
def test_a_question_and_nothing_stated_only_asks(text: str) -> None:
    assert only_asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "I just got a smoker. How do I clean it?",  # a fact, then the question
        "Went skiing with the kids.",
        "We moved to Lisbon in May.\nDo you like it there?",
        "Is it ready? I think it is.",  # ends on a statement
        "我上周去了杭州。你去过吗？",
        "",
        "Really! 😅",
    ],
)
def test_a_note_that_states_something_does_not_only_ask(text: str) -> None:
    assert not only_asks(text)
