"""The LLM brain plugged into the §5 scenarios: its choices are enacted, its failures fall back to the rule brain."""

import json
import re

import pandas as pd

from coordkit.ahoy import scenarios
from coordkit.ahoy.llm_brain import llm_brains
from coordkit.llm import ScriptedClient


def test_an_llm_that_answers_nonsense_enacts_exactly_the_rule_brains_scenario():
    client = ScriptedClient(["I would rather not."], repeat=True)
    with_llm = scenarios.external_event(brain_factory=llm_brains(client))
    rules = scenarios.external_event()
    pd.testing.assert_frame_equal(with_llm.messages, rules.messages)
    summary = with_llm.summary()
    assert summary["llm_calls"] == len(client.requests) > 0 and summary["violations"] == 0 and summary["terminated"]
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

    cheapest = next(r for r in scenarios.branching(brain_factory=llm_brains(ScriptedClient(prefer_express)))
                    if r.scenario == "branching-cheapest")
    assert scenarios.delivery_path(cheapest) == "express" and cheapest.terminated and cheapest.model.violations == 0


def test_an_enactment_stops_at_its_llm_call_limit():
    from coordkit.ahoy.scenarios import PEN, enact
    from coordkit.bspl.parser import load

    client = ScriptedClient(["thinking..."], repeat=True)
    run = enact("limited", [load("purchase")], PEN, brain_factory=llm_brains(client), max_llm_calls=2)
    assert run.summary()["llm_calls"] == 2 and not run.terminated
