"""What real models send where JSON was asked for, read by chunklab.llm_json.read_json:
fences closed or not, prose around, chat-template leftovers, replies cut at max_tokens."""

from __future__ import annotations

import pytest

from chunklab.llm_json import UnreadableJson, forms, read_json


@pytest.mark.parametrize(
    "reply",
    [
        '{"score": 7, "reason": "ok"}',
        '```json\n{"score": 7, "reason": "ok"}\n```',
        'Sure! Here is the JSON:\n```\n{"score": 7, "reason": "ok"}\n```\nLet me know if you need more.',
        'Here you go: {"score": 7, "reason": "ok"} Hope this helps.',
        '```json\n{"score": 7, "reason": "ok"}',  # a fence never closed
        '<|im_start|>assistant\n{"score": 7, "reason": "ok"}<|im_end|>',
        '\ufeff  {"score": 7, "reason": "ok"}  ',
        'I think {score: 7} but formally {"score": 7, "reason": "ok"}',  # the first bracket that decodes
    ],
)
def test_the_json_object_is_found_wherever_the_model_put_it(reply):
    assert read_json(reply) == {"score": 7, "reason": "ok"}


def test_a_list_is_read_as_a_list():
    assert read_json('Scores: [{"index": 0, "score": 3}]') == [{"index": 0, "score": 3}]


@pytest.mark.parametrize(
    "reply, finish, problem",
    [
        (
            '{"score": 7, "reason": "the answer restates the context and then goes on',
            "length",
            "cut at its limit of 200",
        ),
        ("", "stop", "an empty reply"),
        ("Score: 7 out of 10", "stop", "not JSON"),
        ("null", "stop", "not a JSON object or list"),
    ],
)
def test_what_cannot_be_read_says_why(reply, finish, problem):
    with pytest.raises(UnreadableJson, match=problem):
        read_json(reply, finish, 200)


def test_the_forms_go_from_the_most_precise_to_none():
    schema = {"type": "object"}
    found = forms("judge", schema)
    assert [name for name, _ in found] == ["json_schema", "json_object+schema", "json_object", "none"]
    assert found[0][1]["json_schema"]["schema"] is schema and found[1][1] == {"type": "json_object", "schema": schema}
    assert found[-1][1] is None
