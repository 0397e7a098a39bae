"""Ahoy's prompt builder and LLM access function with a scripted LLM (no network): Appendix D's prompts, a Buyer
enacting Purchase, counted fallbacks for malformed replies, tools, external events, and the adapter's refusal."""

import asyncio
import json
import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.ahoy.goal import Goal
from coordkit.ahoy.llm_policies import NULL_LIMIT, BadReply, ahoy_policy, parse_reply
from coordkit.ahoy.model import AHOY, AhoyEnactment
from coordkit.ahoy.policies import Turn
from coordkit.ahoy.prompts import BSPL_SEMANTICS, roles_of, system_prompt, user_prompt
from coordkit.ahoy.tools import Toolbox
from coordkit.bspl import load
from coordkit.bspl.kiko import RECEIVED, START, Event
from coordkit.bspl.semantics import Instance
from coordkit.llm import LLMError, ScriptedClient
from coordkit.llm.parsing import ReplyParseError
from coordkit.policies import Classifier, Policy

PURCHASE = load("purchase")
GOAL = Goal(items=("pen",), budget=20, address="123 Main St, Raleigh, NC 27606")


def reply(choice, params=None, tools=()):
    return json.dumps({"choice": choice, "params": params or {}, "tool_requests": list(tools)})


class RuleBuyer(Policy):
    """The fallback: a minimal rule brain that sends one rfq at the start and nothing else."""

    classifier = Classifier()

    def decide(self, turn: Turn) -> list[Instance]:
        protocol = turn.agent.states["Purchase"].protocol
        return [
            f.bind(protocol, ID="rule-1", item="pen")
            for f in turn.forms
            if f.schema.name == "rfq" and turn.event.kind == START
        ]


def options(request) -> dict[str, int]:
    """{message name: option index} from the latest user prompt."""
    prompt = request.messages[-1][1]
    return {m: int(i) for i, m in re.findall(r"^(\d+)\) Purchase/(\w+)", prompt, flags=re.MULTILINE)}


def scripted_buyer(request, wrong_item=False):
    """Plays the Buyer as the paper's LLM did: rfq, accept the quote, complete on delivery; otherwise null."""
    prompt, choices = request.messages[-1][1], options(request)
    if "deliver (from Shipper to Buyer)" in prompt and "completed (from" not in prompt:
        return reply(choices["completed"], {"satisfaction": "happy"})
    if "quote (from Seller to Buyer)" in prompt and "accept" in choices:
        params = {"address": GOAL.address, "resp": "yes"} | ({"item": "laptop"} if wrong_item else {})
        return reply(choices["accept"], params)
    if "(No messages yet)" in prompt:
        return reply(choices["rfq"], {"item": "pen under $20"})  # ID left out: the access function fills it
    return reply(None)


def calls(policy) -> int:
    """The access function's LLM calls (those that fell back included)."""
    return policy.llm_decisions + policy.fallback_count


def enact(seed=0, script=scripted_buyer):
    """The Ahoy agent buys a pen through the access function (the Buyer's rule brain as fallback)."""
    client = ScriptedClient(script)
    model = AhoyEnactment(llm=client, rng=seed).run()
    (seat,) = model.seats
    return model, seat.policy, client


def buyer_after_quote(seed=0):
    """The Ahoy agent after it sent rfq and received a quote (the model not run)."""
    agent = AhoyEnactment(rng=seed).agent(AHOY)
    state = agent.states["Purchase"]
    state.send(Instance.of(state.protocol, "rfq", ID="fcba", item="pen"))
    state.receive(Instance.of(state.protocol, "quote", ID="fcba", item="pen", price=4))
    return agent


def access(script, **options):
    """The access function over a scripted client, with :class:`RuleBuyer` as its fallback."""
    return ahoy_policy(ScriptedClient(script), RuleBuyer(), GOAL, [PURCHASE], **options)


def turn(agent, kind=START):
    return Turn(agent, tuple(agent.enabled()), Event(kind))


def test_the_system_prompt_follows_listing_1_9():
    text = system_prompt("Buyer", GOAL.describe(), [PURCHASE])
    assert text.startswith("You are a Buyer agent.\n\nYour user wants you to fulfill the goal described in input.txt")
    assert GOAL.describe() in text and BSPL_SEMANTICS in text and "PARAMETER ADORNMENTS (three types):" in text
    assert "EXTERNAL EVENTS: External events represent new tasks" in text
    assert "TOOLS: save_state_to_memory(agent_name, key, value)" in text
    assert 'RESPONSE: {"choice": 0|null, "params": {...}, "tool_requests": [' in text
    assert "RULE: Choose if viable. Null only if no options." in text
    definitions = text.split("PROTOCOL DEFINITIONS (BSPL specs with inline message explanations):")[1]
    assert "--- PURCHASE PROTOCOL ---" in definitions and PURCHASE.text.strip() in definitions
    assert "// Buyer initiates: requests a quote for an item" in definitions


def test_the_user_prompt_follows_listing_1_10():
    agent = buyer_after_quote()
    text = user_prompt(agent, roles_of(agent), agent.enabled(), [])
    assert text.startswith("You are agent 'ahoy (as Buyer in Purchase)'. Choose at most one option, or return null.")
    assert "Role: Buyer (in Purchase)" in text and "(No pending external events at this time)" in text
    assert (
        "=== MESSAGE HISTORY ===\n\n1. rfq (from Buyer to Seller)\n   ID: fcba\n   item: pen\n\n"
        "2. quote (from Seller to Buyer)\n   ID: fcba\n   item: pen\n   price: 4\n\n"
        "=== END HISTORY (2 messages) ==="
    ) in text
    assert "0) Purchase/rfq - out: ['ID', 'item']" in text
    assert "1) Purchase/accept [in: ID=fcba, item=pen, price=4] - out: ['address', 'resp']" in text
    assert "3) Purchase/completed [in: ID=fcba, item=pen, price=4] - out: ['satisfaction']" in text
    assert (
        '- To choose an option WITH parameters: {"choice": 0, "params": {"ID": "value", "item": "value"}, '
        '"tool_requests": []}'
    ) in text
    assert '- To decline all options: {"choice": null, "params": {}, "tool_requests": []}' in text


def test_a_scripted_llm_enacts_purchase_as_the_buyer():
    model, policy, client = enact()
    messages = model.messages()
    assert list(messages["message"]) == ["rfq", "quote", "accept", "ship", "deliver", "completed"]
    assert model.violations == 0 and not policy.fallbacks and calls(policy) == len(client.requests) >= 3
    assert model.llm_calls == calls(policy) and model.llm_fallbacks == 0
    assert policy.nulls == calls(policy) - 3  # every call but the three choices declined
    rfq = model.agent(AHOY).states["Purchase"].history[0]
    assert uuid.UUID(rfq.payload["ID"]).version == 4 and rfq.payload["item"] == "pen under $20"
    assert client.requests[0].system == client.requests[-1].system  # written once per enactment
    again, _, _ = enact()
    assert again.agent(AHOY).states["Purchase"].history[0].payload["ID"] == rfq.payload["ID"]  # seeded uuid


@pytest.mark.parametrize(
    "text, kind",
    [
        ("I would buy the pen.", "not JSON"),
        (reply(7, {"address": "x", "resp": "y"}), "invalid choice"),
        (reply(True), "invalid choice"),
        (reply(1, {"address": "x", "resp": "y", "colour": "red"}), "unknown params"),
        (reply(1, {"address": "x"}), "missing params"),
        ('{"params": {}}', "bad format"),
    ],
)
def test_malformed_replies_fall_back_to_the_rule_brain_and_are_counted(text, kind):
    agent = buyer_after_quote()
    policy = access([text])
    decision = policy.decide(turn(agent))
    assert [str(i) for i in decision] == ["rfq(ID=rule-1, item=pen)"]  # the rule brain decided
    assert policy.fallbacks == {"unparseable reply": 1} and policy.rejections == {kind: 1} and calls(policy) == 1


def test_a_failed_call_falls_back_too():
    agent = buyer_after_quote()
    policy = access([LLMError("rate limited")])
    assert len(policy.decide(turn(agent))) == 1
    assert policy.fallbacks == {"call failed (LLMError)": 1} and not policy.rejections


def test_a_reply_in_a_markdown_code_block_is_read_and_bound():
    agent = buyer_after_quote()
    text = "I accept the cheapest quote.\n```json\n" + reply(1, {"address": "Main St", "resp": "ok"}) + "\n```"
    policy = access([text])
    (instance,) = policy.decide(turn(agent))
    assert str(instance) == "accept(ID=fcba, item=pen, price=4, address=Main St, resp=ok)"
    assert agent.emit(instance) and not policy.fallbacks


def test_a_tool_request_runs_locally_and_its_result_reaches_the_next_call():
    agent = buyer_after_quote()
    save = {
        "tool": "save_state_to_memory",
        "args": {"agent_name": "Buyer", "key": "price_strategy", "value": "accept above $50"},
    }
    client = ScriptedClient(
        [reply(None, tools=[save, {"tool": "rm_rf", "args": {}}]), reply(1, {"address": "Main St", "resp": "ok"})]
    )
    toolbox = Toolbox()
    policy = ahoy_policy(client, RuleBuyer(), GOAL, [PURCHASE], toolbox=toolbox)
    (instance,) = policy.decide(turn(agent))
    assert instance.schema.name == "accept" and calls(policy) == 2 and policy.nulls == 0
    assert toolbox.memory == {"Buyer": {"price_strategy": "accept above $50"}}
    roles = [role for role, _ in client.requests[1].messages]
    follow_up = client.requests[1].messages[-1][1]
    assert roles == ["user", "assistant", "user"] and follow_up.startswith("TOOL RESULTS:")
    assert 'saved price_strategy for Buyer: "accept above $50"' in follow_up
    assert "ERROR: unknown tool 'rm_rf'" in follow_up


def test_a_tool_round_is_the_same_decision_when_awaited():
    agent, twin = buyer_after_quote(), buyer_after_quote()
    save = {"tool": "save_state_to_memory", "args": {"agent_name": "Buyer", "key": "k", "value": 1}}
    script = [reply(None, tools=[save]), reply(1, {"address": "Main St", "resp": "ok"})]
    policy, awaited = access(list(script)), access(list(script))
    assert policy.decide(turn(agent)) == asyncio.run(awaited.decide_async(turn(twin)))
    assert calls(awaited) == 2 and awaited.toolbox.memory == {"Buyer": {"k": 1}}


def test_tool_rounds_are_limited():
    agent = buyer_after_quote()
    asking = reply(None, tools=[{"tool": "save_state_to_memory", "args": {"agent_name": "a", "key": "k", "value": 1}}])
    policy = ahoy_policy(ScriptedClient([asking], repeat=True), RuleBuyer(), GOAL, [PURCHASE], max_tool_rounds=2)
    assert policy.decide(turn(agent)) == [] and calls(policy) == 3 and policy.nulls == 1


def test_the_adapter_refuses_a_binding_that_contradicts_an_in_parameter():
    model, policy, _ = enact(script=lambda request: scripted_buyer(request, wrong_item=True))
    assert model.violations == 1 and "item='laptop'" in model.agent(AHOY).violations[0]
    assert "accept" not in set(model.messages()["message"]) and not policy.fallbacks


def test_external_events_are_shown_until_a_new_enactment_handles_them():
    lamp = {
        "timestamp": "2025-01-01T10:00:00",
        "event_type": "new_order",
        "message": "Buy a lamp under $30",
        "priority": "high",
        "metadata": {"item": "lamp"},
    }
    agent = buyer_after_quote()
    agent.events.pending.append(lamp)
    client = ScriptedClient([reply(1, {"address": "Main St", "resp": "ok"}), reply(0, {"item": "lamp"}), reply(None)])
    policy = ahoy_policy(client, RuleBuyer(), GOAL, [PURCHASE])
    policy.decide(turn(agent))  # accept continues the pen enactment: the event stays
    assert agent.events.pending == [lamp] and agent.events.handled == []
    (rfq,) = policy.decide(turn(agent))  # rfq starts a new enactment: handled
    assert rfq.payload["item"] == "lamp" and agent.events.pending == [] and agent.events.handled == [lamp]
    policy.decide(turn(agent))
    prompts = [r.messages[0][1] for r in client.requests]
    assert all("=== PENDING EXTERNAL EVENTS ===" in p and "Buy a lamp under $30" in p for p in prompts[:2])
    assert "[HIGH] new_order at 2025-01-01T10:00:00" in prompts[0] and '"item": "lamp"' in prompts[0]
    assert "(No pending external events at this time)" in prompts[2]


def test_five_null_decisions_in_a_row_end_the_run_and_no_options_means_no_call():
    agent = buyer_after_quote()
    policy = access([reply(None)] * 4 + [reply(1, {"address": "x", "resp": "y"})] + [reply(None)] * 5)
    for _ in range(4):
        policy.decide(turn(agent, RECEIVED))
    assert not policy.done()
    policy.decide(turn(agent, RECEIVED))  # a choice resets the count
    for _ in range(NULL_LIMIT):
        assert not policy.done()
        policy.decide(turn(agent, RECEIVED))
    assert policy.done() and policy.nulls == 9
    assert policy.decide(Turn(agent, (), Event(RECEIVED))) == [] and calls(policy) == 10
    policy.reset()
    assert not policy.done()


def test_the_access_function_is_classified_by_its_fallback():
    policy = access([])
    assert policy.classifier == Classifier(stochastic=True, stateful=False, calls_llm=True)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
REPLIES = st.fixed_dictionaries(
    {},
    optional={
        "choice": st.none() | st.integers(-2, 6) | JSON,
        "params": st.dictionaries(st.sampled_from(["ID", "item", "price", "address", "resp", "x"]), JSON, max_size=4)
        | JSON,
        "tool_requests": st.lists(st.fixed_dictionaries({"tool": JSON, "args": JSON}) | JSON, max_size=2) | JSON,
    },
)


def near_miss_params(option: int):
    """Parameters for option ``option`` after a quote, often right, so that accepted replies are tested too."""
    schema = PURCHASE.message(["rfq", "accept", "reject", "completed"][option])
    value = st.text(max_size=5) | st.integers()
    return st.fixed_dictionaries(
        {n: value | st.none() for n in schema.outs}, optional={n: value for n in (*schema.ins, "colour")}
    )


NEAR_MISSES = st.integers(-1, 4).flatmap(lambda i: near_miss_params(i % 4).map(lambda p: {"choice": i, "params": p}))


@settings(max_examples=300)
@given(
    text=st.text()
    | (REPLIES | NEAR_MISSES).map(json.dumps)
    | st.tuples(st.text(max_size=20), REPLIES).map(lambda t: f"{t[0]}\n```json\n{json.dumps(t[1])}\n```")
)
def test_the_reply_parser_raises_nothing_but_reply_parse_error(text):
    agent = buyer_after_quote()
    options = [(PURCHASE, form) for form in agent.enabled()]
    try:
        parsed = parse_reply(text, options)
    except ReplyParseError as error:
        assert isinstance(error, BadReply)
        return
    assert parsed.choice is None or 0 <= parsed.choice < len(options)
    if parsed.choice is not None:  # what it accepts binds exactly the chosen message's parameters
        form = options[parsed.choice][1]
        assert set(parsed.params) <= set(form.schema.ins) | set(form.schema.outs)
