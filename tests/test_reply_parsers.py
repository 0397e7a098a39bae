"""Every reply parser, on any text, returns a decision or raises ReplyParseError, and does not stall (how fast it reads
the worst replies is printed by benchmarks/bench_reply_parsers.py).

The parsers are found through the policy examples (every LLM policy of every family has one), so a new family's
parsers are fuzzed as soon as its examples exist. The texts are hypothesis's, plus an adversarial corpus: the
replies that crashed or stalled runs before (deep nesting, a 401-digit number, integers beyond Python's
4,300-digit limit, a 100,000-character wall of braces) and near-misses of every format the prompts ask for.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from policy_examples import all_examples

from coordkit.llm import LLMRequest, ScriptedClient
from coordkit.llm.parsing import MAX_REPLY_CHARS, ReplyParseError, json_object, labelled_number, labelled_text
from coordkit.policies import LLMPolicy

HUGE = "9" * 5000
LABELS = ("DECISION", "SENSITIVITY", "REASONING", "BOATS", "TARGET row", "PROPOSE position", "action", "choice")
ADVERSARIAL = [
    "",
    "{" * 100_000,
    "{" * (MAX_REPLY_CHARS - 1),
    "[" * 50_000 + "]" * 50_000,
    '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"action": ' + "{" * 3000 + "}" * 3000 + "}",
    "DECISION: " + "9" * 401,
    "DECISION: " + HUGE,
    "DECISION: 1e400\nSENSITIVITY: x",
    '{"TARGET_INVENTORY": ' + "9" * 401 + ', "ORDER_ADJUSTMENT_FACTOR": 0.2}',
    '{"quota_estimate": ' + HUGE + "}",
    '{"price": ' + "9" * 4000 + ', "time": 20}',
    '{"price": NaN, "time": Infinity}',
    '{"price": "$1e999", "time": "25:99"}',
    '{"choice": ' + "9" * 4000 + ', "params": {}}',
    '{"choice": [1, 2], "params": [], "tool_requests": {}}',
    '[{"action": "C"}]',
    '{"action": ["C"]}',
    "TARGET row=" + HUGE,
    "PROPOSE position=" + HUGE + " value=1",
    "position=1 value=" + HUGE,
    HUGE,
    "APPROVE" * 10_000,
    "DECISION:\n" * 10_000,
    ("X" * 60 + ": ") * 1000,
    "\x00\udcff\U0001f41f" * 1000,
]


def llm_examples() -> list:
    """(parse, what it reads a reply against) for every LLM policy the examples make. The second is whatever the
    policy hands its parser in a real decision (Ahoy's access function hands it the exchange it built)."""
    found = []
    for example in all_examples():
        policy = example.make(np.random.default_rng(0), ScriptedClient(lambda request: ""))
        if not isinstance(policy, LLMPolicy):
            continue
        parse, seen = policy.parse, []
        policy.parse = lambda text, observation, parse=parse, seen=seen: (
            seen.append(observation) or parse(text, observation)
        )
        policy.decide(example.observations()[0])
        found.append(pytest.param(parse, seen[0], id=example.id))
    return found


def helpers() -> list:
    return [
        pytest.param(json_object, id="json_object"),
        pytest.param(lambda text: labelled_number(text, "DECISION"), id="labelled_number"),
        pytest.param(lambda text: labelled_text(text, "SENSITIVITY"), id="labelled_text"),
    ]


replies = st.one_of(
    st.text(max_size=300),
    st.sampled_from(ADVERSARIAL),
    st.builds(lambda label, value: f"{label}: {value}", st.sampled_from(LABELS), st.text(max_size=40)),
    st.builds(
        lambda label, number: f"{label}: {number}",
        st.sampled_from(LABELS),
        st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True)),
    ),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
        ),
        max_leaves=12,
    ).map(repr),
)


def read_quickly(parse, text: str):
    """``parse(text)`` returns or raises ReplyParseError (anything else fails the test). How fast it reads is
    benchmarks/bench_reply_parsers.py's to measure: no clock here, which a loaded machine would trip."""
    try:
        parse(text)
    except ReplyParseError:
        pass


@pytest.mark.parametrize("parse", helpers())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies)
def test_a_helper_reads_any_reply_or_raises_reply_parse_error(parse, text):
    read_quickly(parse, text)


@pytest.mark.parametrize(("parse", "observation"), llm_examples())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies)
def test_a_policys_parser_reads_any_reply_or_raises_reply_parse_error(parse, observation, text):
    read_quickly(lambda reply: parse(reply, observation), text)


@pytest.mark.parametrize(("parse", "observation"), llm_examples())
def test_every_adversarial_reply_is_refused_or_read_quickly(parse, observation):
    for text in ADVERSARIAL:
        read_quickly(lambda reply: parse(reply, observation), text)


def test_a_parser_that_lets_another_error_out_still_falls_back_under_its_name():
    def broken(text, observation):
        return 1 / 0

    ask = LLMRequest.user("You decide.", "Decide.")
    policy = LLMPolicy(ScriptedClient(lambda request: "DECISION: 4"), lambda o: ask, broken, _Constant(), name="x")
    assert policy.decide("anything") == "rule"
    assert policy.fallbacks == {"parser error (ZeroDivisionError)": 1}


class _Constant:
    def decide(self, observation):
        return "rule"
