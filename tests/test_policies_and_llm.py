"""The Policy idea: LLM decisions through the client interface, parsed, and falling back — counted — on failure."""

import asyncio
import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.llm import LLMError, LLMRequest, ScriptedClient
from coordkit.llm.parsing import ReplyParseError, json_object, labelled_number, labelled_text
from coordkit.policies import Classifier, LLMPolicy, Policy
from coordkit.rep.beer_game import stand_in
from coordkit.rep.beer_game.llm_policies import (
    MAX_ORDER,
    parse_order,
    parse_synthesis,
    synthesis_policy,
    synthesis_request,
)
from coordkit.rep.beer_game.model import BeerGame
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET, RuleSynthesis
from coordkit.rep.protocol import SynthesisRequest

REQUEST = SynthesisRequest(
    {TARGET: 17.0, ADJUSTMENT: 0.26},
    "Customer demand looks like 8.0 a round; my own orders in look persistent. If demand rises 10%, I'd order "
    "1.0 more. My stock target is 17 and my stock is 5 below my current target, with 16 on order "
    "(2.0 rounds of supply for a 4-round lead time). I'd normally correct 26% of a stock gap a round.",
    (
        (
            2,
            "Customer demand looks like 8.0 a round; my own orders in look temporary. If demand rises 10%, I'd "
            "order 2.0 more. My stock target is 21 and my stock is 3 above my current target, with 30 on order "
            "(3.8 rounds of supply for a 4-round lead time). I'd normally correct 30% of a stock gap a round.",
        ),
    ),
)


class Negate(Policy):
    name = "negate"
    classifier = Classifier()

    def decide(self, x):
        return -x


def play(protocol, seed, **params):
    return BeerGame(protocol=protocol, rng=seed, **params).run()


def doubling_policy(client):
    return LLMPolicy(
        client,
        lambda x: LLMRequest.user("sys", f"double {x}"),
        lambda text, x: labelled_number(text, "DECISION"),
        Negate(),
    )


def test_an_llm_decision_is_parsed_from_the_reply():
    client = ScriptedClient(["Thinking...\nDECISION: 8\nREASONING: doubled"])
    policy = doubling_policy(client)
    assert policy.decide(4) == 8.0
    assert policy.llm_decisions == 1 and policy.fallback_count == 0
    assert client.requests[0].messages == (("user", "double 4"),)


def test_failed_calls_and_nonsense_fall_back_and_are_counted_by_reason():
    client = ScriptedClient([LLMError("rate limited"), "I would rather not say", TimeoutError("slow")])
    policy = doubling_policy(client)
    assert [policy.decide(3) for _ in range(4)] == [-3, -3, -3, -3]  # the 4th: the script ran out
    assert policy.fallbacks == {"call failed (LLMError)": 2, "unparseable reply": 1, "call failed (TimeoutError)": 1}


def test_the_async_path_answers_like_the_sync_one():
    client = ScriptedClient(["DECISION: 3"], repeat=True)
    reply = asyncio.run(client.complete_async(LLMRequest.user("sys", "hi")))
    assert reply.text == "DECISION: 3" and reply.model == "scripted"


def test_rule_synthesis_reads_targets_supply_and_judgement_from_the_texts():
    theta = RuleSynthesis(damping=0.5).decide(REQUEST)
    assert theta[TARGET] == pytest.approx((17 + 21) / 2)
    # natural 26%, own supply 2.0 rounds for a 4-round lead time (not overfull), a neighbour says "temporary"
    assert theta[ADJUSTMENT] == pytest.approx(0.26 * 0.5)


def test_rule_synthesis_leaves_theta_alone_without_the_templated_phrases():
    request = SynthesisRequest({TARGET: 17.0, ADJUSTMENT: 0.26}, "hello", ((1, "nothing to see"),))
    assert RuleSynthesis().decide(request) == request.theta


def test_llm_synthesis_prompt_carries_the_sensitivities_and_its_json_reply_sets_theta():
    client = ScriptedClient(['```json\n{"TARGET_INVENTORY": 20, "ORDER_ADJUSTMENT_FACTOR": 0.2}\n```'])
    policy = synthesis_policy(client, RuleSynthesis())
    assert policy.decide(REQUEST) == {TARGET: 20.0, ADJUSTMENT: 0.2}
    request = client.requests[0]
    assert "NEIGHBOR SENSITIVITIES" in request.messages[0][1] and "look temporary" in request.messages[0][1]
    assert (request.temperature, request.max_tokens) == (0.1, 300)


@pytest.mark.parametrize(
    "reply",
    ['{"TARGET_INVENTORY": "lots"}', "no json", '{"TARGET_INVENTORY": NaN, "ORDER_ADJUSTMENT_FACTOR": 1}', "[1, 2]"],
)
def test_llm_synthesis_falls_back_to_the_rules_on_bad_json(reply):
    policy = synthesis_policy(ScriptedClient([reply]), RuleSynthesis())
    assert policy.decide(REQUEST) == RuleSynthesis().decide(REQUEST)
    assert policy.fallback_count == 1


def test_a_beer_game_with_a_failing_llm_runs_on_its_fallback_and_reports_it():
    client = ScriptedClient(["not json"], repeat=True)
    with_llm = play("rep_textual", seed=3, llm=client)
    without = play("rep_textual", seed=3)
    pd.testing.assert_frame_equal(with_llm.frame(), without.frame())
    assert with_llm.llm_fallbacks == with_llm.llm_calls == len(client.requests) > 0


def test_a_beer_game_follows_the_llms_coordination_variables():
    def answer(request):
        if request.purpose == "rep.beer_game.aggregate":
            return json.dumps({"TARGET_INVENTORY": 30, "ORDER_ADJUSTMENT_FACTOR": 0.5})
        return "DECISION: 5\nSENSITIVITY: steady as she goes"

    game = play("rep_textual", seed=3, rounds=6, llm=ScriptedClient(answer))
    assert game.llm_fallbacks == 0 and game.llm_calls == 4 * 6 + 4 * 5
    assert set(game.frame().query("round > 0")["order"]) == {5}
    assert all(s.client.theta == {TARGET: 30.0, ADJUSTMENT: 0.5} for s in game.chain)
    assert synthesis_request(REQUEST).purpose == "rep.beer_game.aggregate"


@settings(max_examples=2000, deadline=None)
@given(st.text())
def test_reply_parsers_never_raise_anything_but_parse_errors(text):
    for parse in (
        lambda t: labelled_number(t, "DECISION"),
        lambda t: labelled_text(t, "SENSITIVITY"),
        json_object,
        lambda t: parse_synthesis(t, REQUEST),
    ):
        try:
            parse(text)
        except ReplyParseError:
            pass


def test_parsers_read_what_the_prompts_ask_for():
    assert labelled_number("**DECISION:** 12 boats", "DECISION") == 12
    assert (
        labelled_text("DECISION: 3\nSENSITIVITY: if demand rises\nI order more", "SENSITIVITY")
        == "if demand rises\nI order more"
    )
    assert json_object('noise {"a": {"b": 1}} tail') == {"a": {"b": 1}}


def _game_requests(protocol: str) -> list:
    client = ScriptedClient(stand_in.reply)
    play(protocol, seed=1, rounds=5, step_round=2, llm=client)
    return client.requests


def test_a2a_players_are_asked_from_numbers_only_and_rep_players_read_sensitivities():
    a2a = [r for r in _game_requests("a2a") if "ROUND 3 " in r.messages[0][1]]
    rep = [
        r
        for r in _game_requests("rep_textual")
        if r.purpose == "rep.beer_game.decide" and "ROUND 3 " in r.messages[0][1]
    ]
    assert len(a2a) == len(rep) == 4
    for request in a2a:
        prompt = request.messages[0][1]
        assert "REASONING: [" in prompt and "NUMERICAL NEIGHBOR PATTERNS" in prompt
        assert "Ordering" not in prompt and "SENSITIVITY" not in prompt  # no neighbour's words reach A2A
    for request in rep:
        prompt = request.messages[0][1]
        assert "SENSITIVITY: [" in prompt and "TARGET_INVENTORY" in prompt and "If demand rose 10%" in prompt
        assert (request.temperature, request.max_tokens) == (0.1, 300)
    assert "the brewery" in a2a[-1].system and "the customers" in a2a[0].system


def test_base_stock_players_never_ask_an_llm():
    assert _game_requests("base_stock") == []


@pytest.mark.parametrize(
    "reply",
    [
        "DECISION: -3\nSENSITIVITY: x",
        "DECISION: 5000\nREASONING: x",
        "DECISION: 4",
        "I order four",
        "DECISION: 4\nSENSITIVITY:",
    ],
)
def test_player_replies_without_a_usable_order_or_message_fall_back(reply):
    game = play("rep_numerical", seed=3, rounds=4, step_round=2, llm=ScriptedClient([reply], repeat=True))
    rules = play("rep_numerical", seed=3, rounds=4, step_round=2)
    pd.testing.assert_frame_equal(game.frame(), rules.frame())
    assert game.llm_fallbacks == game.llm_calls == 16


@settings(max_examples=3000, deadline=None)
@given(st.text())
def test_the_order_parser_never_raises_anything_but_parse_errors(text):
    for candidate in (text, f"DECISION: {text}", f"DECISION: 4\nSENSITIVITY: {text}"):
        try:
            assert 0 <= parse_order(candidate) <= MAX_ORDER
        except ReplyParseError:
            pass
