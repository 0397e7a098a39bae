"""The LLM access function plugged into the §5 scenarios: its choices are enacted, its failures fall back to the
rule brains, and the rule-based stand-in plays every scenario through it."""

import json
import re

import pandas as pd
import pytest

from coordkit.ahoy import experiments, stand_in
from coordkit.ahoy.model import CONCURRENT, AhoyEnactment
from coordkit.llm import ScriptedClient


def test_an_llm_that_answers_nonsense_enacts_exactly_the_rule_brains_scenario():
    client = ScriptedClient(["I would rather not."], repeat=True)
    with_llm = experiments.external_event(llm=client)["external-event"]
    rules = experiments.external_event()["external-event"]
    pd.testing.assert_frame_equal(with_llm.messages(), rules.messages())
    summary = with_llm.summary()
    assert summary["llm_calls"] == len(client.requests) > 0 and summary["llm_fallbacks"] == summary["llm_calls"]
    assert summary["violations"] == 0 and summary["terminated"]
    assert "PENDING EXTERNAL EVENTS" in " ".join(r.messages[0][1] for r in client.requests)


def test_the_llms_choice_is_what_gets_enacted():
    def prefer_express(request):
        """Accepts the offer, then asks for express delivery; anything else is left to the rule brain."""
        prompt = request.messages[-1][1]
        for message, out in (("express_delivery_request", "express_delivery"), ("accept", "confirmation")):
            option = re.search(rf"^(\d+)\) FlexiblePurchase/{message} ", prompt, re.M)
            if option:
                return json.dumps({"choice": int(option[1]), "params": {out: "yes"}, "tool_requests": []})
        return "no opinion"

    cheapest = experiments.branching(llm=ScriptedClient(prefer_express))["branching-cheapest"]
    assert cheapest.delivery_path() == "express" and cheapest.finished() and cheapest.violations == 0


def test_an_enactment_stops_at_its_llm_call_limit():
    client = ScriptedClient(["thinking..."], repeat=True)
    model = AhoyEnactment(llm=client, max_llm_calls=2).run()
    assert model.summary()["llm_calls"] == 2 and not model.summary()["terminated"]
    assert model.frame()["llm_calls"].iloc[-1] == 2


@pytest.fixture(scope="module")
def stand_in_scenarios():
    client = ScriptedClient(stand_in.reply)
    return experiments.scenarios(2, 0, llm=client), client


def test_the_stand_in_plays_every_scenario_to_the_end_without_violations(stand_in_scenarios):
    frame, client = stand_in_scenarios
    assert len(frame) == 14 and frame["terminated"].all() and (frame["violations"] == 0).all()
    assert frame["llm_calls"].sum() == len(client.requests) and (frame["llm_calls"] > 0).all()
    rules = experiments.scenarios(2, 0)
    assert list(frame["messages"]) == list(rules["messages"]) and list(frame["delivery"]) == list(rules["delivery"])


def test_the_stand_ins_only_fallback_is_the_quote_for_an_event_that_left_the_prompt(stand_in_scenarios):
    """The access function handles the trolley request when its rfq goes out; the trolley's budget and address are
    then in no prompt, so the stand-in leaves the quote to the Buyer's rule brain: one fallback, nothing else."""
    frame, _ = stand_in_scenarios
    fallbacks = frame.set_index(["scenario", "seed"])["llm_fallbacks"]
    assert (fallbacks.drop("external-event", level="scenario") == 0).all()
    assert (fallbacks.xs("external-event", level="scenario") == 1).all()


def test_the_stand_in_answers_in_the_papers_json_format():
    model = AhoyEnactment(protocols="flexible_purchase", delivery="urgent", llm=ScriptedClient(stand_in.reply)).run()
    replies = [stand_in.reply(request) for request in model.llm.requests]
    assert all(set(json.loads(text)) == {"choice", "params", "tool_requests"} for text in replies)
    assert [json.loads(text)["params"] for text in replies if json.loads(text)["choice"] is not None] == [
        {"item": "pen"},
        {"confirmation": "confirmed"},
        {"express_delivery": "express"},
        {"payment": "$4"},
    ]


def test_the_stand_in_reads_both_ways_of_writing_a_goal():
    concurrent = stand_in.read_goal(f"{stand_in.GOAL_START}{CONCURRENT.describe()}{stand_in.GOAL_END}")
    assert concurrent.budgets == {"glass vase": 100, "ceramic plate": 50, "wooden bat": 50}
    assert concurrent.orders == [("Alice's House", ["glass vase"]), ("Bob's House", ["ceramic plate", "wooden bat"])]
    assert set(concurrent.addresses.values()) == {"123 Main Street, Portland, OR 97201"}
    described = AhoyEnactment(protocols="flexible_purchase", item="glass vase", budget=45, delivery="urgent")
    wish = stand_in.read_goal(f"{stand_in.GOAL_START}{described.pursued_goal.describe()}{stand_in.GOAL_END}")
    assert wish.budgets == {"glass vase": 45} and wish.delivery == "express"
    assert wish.addresses == {"glass vase": "123 Main St, Raleigh, NC 27606"}


def test_a_rule_brain_continues_the_history_the_llm_began():
    """The LLM labels both orders, then answers nonsense: the Merchant's rule brain reads which order each label
    is from the history, so it wraps their items instead of labelling the orders again."""
    answered = []

    def two_labels_then_nonsense(request):
        answered.append(request)
        return stand_in.reply(request) if len(answered) <= 2 else "no idea"

    model = AhoyEnactment(protocols="logistics", llm=ScriptedClient(two_labels_then_nonsense)).run()
    log = model.messages()
    labels = log[log["message"] == "RequestLabel"]["instance"]
    assert len(labels) == 2 and labels.str.contains(r"orderID=[0-9a-f]{8}-").all()  # the LLM's uuids
    assert (log["message"] == "RequestWrapping").sum() == 3 and (log["message"] == "Packed").sum() == 3
    assert model.finished() and model.violations == 0 and model.llm_fallbacks == model.llm_calls - 2 > 0


def test_the_buyers_rule_brain_completes_a_purchase_request_the_llm_handled():
    """The LLM answers only the event, with the trolley's rfq (which handles it), and nonsense otherwise: the
    Buyer's rule brain finds the trolley's budget and address among the queue's handled events (it used to raise
    KeyError: it knew only the events it had taken itself)."""

    def only_the_event(request):
        prompt = request.messages[-1][1]
        rfq = re.search(r"^(\d+)\) Purchase/rfq ", prompt, re.M)
        if "=== PENDING EXTERNAL EVENTS ===" in prompt and rfq:
            return json.dumps({"choice": int(rfq[1]), "params": {"item": "trolley"}, "tool_requests": []})
        return "no idea"

    model = experiments.external_event(llm=ScriptedClient(only_the_event))["external-event"]
    history = model.ahoy.states["Purchase"].history
    accepted = [i.payload for i in history if i.schema.name == "accept" and i.payload["item"] == "trolley"]
    assert accepted[0]["address"] == "400 Warehouse Rd, Durham, NC 27701"
    assert model.finished() and model.violations == 0 and model.llm_fallbacks == model.llm_calls - 1
