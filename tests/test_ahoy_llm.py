"""Ahoy's prompt builder and LLM access function with a scripted LLM (no network): Appendix D's prompts, a Buyer
enacting Purchase, counted fallbacks for malformed replies, tools, external events, and the adapter's refusal."""

import json
import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.ahoy.goal import Goal
from coordkit.ahoy.llm_brain import NULL_LIMIT, BadReply, llm_brain, parse_reply
from coordkit.ahoy.prompts import BSPL_SEMANTICS, roles_of, system_prompt, user_prompt
from coordkit.ahoy.tools import Toolbox
from coordkit.bspl import load
from coordkit.bspl.kiko import RECEIVED, START, Event, EnactmentModel, messages_frame
from coordkit.bspl.semantics import Instance
from coordkit.llm import LLMError, ScriptedClient
from coordkit.policies import ReplyParseError

PURCHASE = load("purchase")
SYSTEM = {"Purchase": {"Buyer": "ahoy", "Seller": "shop", "Shipper": "ups"}}
GOAL = Goal(items=("pen",), budget=20, address="123 Main St, Raleigh, NC 27606")


def reply(choice, params=None, tools=()):
    return json.dumps({"choice": choice, "params": params or {}, "tool_requests": list(tools)})


def rule_buyer(agent, forms, event):
    """The fallback: a minimal rule brain that sends one rfq at the start and nothing else."""
    return [f.bind(PURCHASE, ID="rule-1", item="pen") for f in forms if f.schema.name == "rfq" and event.kind == START]


def counterparts(model):
    """A Seller quoting 4 and shipping what is accepted, and a Shipper delivering."""
    model.agent("shop").decision(lambda agent, forms, event: [
        f.bind(PURCHASE, price=4) if f.schema.name == "quote" else f.bind(PURCHASE, shipped=True) for f in forms])
    model.agent("ups").decision(lambda agent, forms, event: [f.bind(PURCHASE, outcome="delivered") for f in forms])


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


def enact(seed=0, script=scripted_buyer, events=None):
    model = EnactmentModel([PURCHASE], SYSTEM, rng=seed)
    client = ScriptedClient(script)
    brain = llm_brain(client, GOAL, [PURCHASE], rule_buyer, events=events)
    model.agent("ahoy").decision(brain)
    counterparts(model)
    return model.run(), brain, client


def buyer_after_quote(seed=0):
    """An agent that has sent rfq and received a quote, not yet run."""
    model = EnactmentModel([PURCHASE], SYSTEM, rng=seed)
    agent, state = model.agent("ahoy"), model.agent("ahoy").states["Purchase"]
    state.send(Instance.of(PURCHASE, "rfq", ID="fcba", item="pen"))
    state.receive(Instance.of(PURCHASE, "quote", ID="fcba", item="pen", price=4))
    return agent


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
    assert ("=== MESSAGE HISTORY ===\n\n1. rfq (from Buyer to Seller)\n   ID: fcba\n   item: pen\n\n"
            "2. quote (from Seller to Buyer)\n   ID: fcba\n   item: pen\n   price: 4\n\n"
            "=== END HISTORY (2 messages) ===") in text
    assert "0) Purchase/rfq - out: ['ID', 'item']" in text
    assert "1) Purchase/accept [in: ID=fcba, item=pen, price=4] - out: ['address', 'resp']" in text
    assert "3) Purchase/completed [in: ID=fcba, item=pen, price=4] - out: ['satisfaction']" in text
    assert ('- To choose an option WITH parameters: {"choice": 0, "params": {"ID": "value", "item": "value"}, '
            '"tool_requests": []}') in text
    assert '- To decline all options: {"choice": null, "params": {}, "tool_requests": []}' in text


def test_a_scripted_llm_enacts_purchase_as_the_buyer():
    model, brain, client = enact()
    messages = messages_frame(model)
    assert list(messages["message"]) == ["rfq", "quote", "accept", "ship", "deliver", "completed"]
    assert model.violations == 0 and not brain.fallbacks and brain.calls == len(client.requests) >= 3
    assert brain.nulls == brain.calls - 3  # every call but the three choices declined
    rfq = model.agent("ahoy").states["Purchase"].history[0]
    assert uuid.UUID(rfq.payload["ID"]).version == 4 and rfq.payload["item"] == "pen under $20"
    assert client.requests[0].system == client.requests[-1].system  # written once per enactment
    again, _, _ = enact()
    assert again.agent("ahoy").states["Purchase"].history[0].payload["ID"] == rfq.payload["ID"]  # seeded uuid


@pytest.mark.parametrize("text, kind", [
    ("I would buy the pen.", "not JSON"),
    (reply(7, {"address": "x", "resp": "y"}), "invalid choice"),
    (reply(True), "invalid choice"),
    (reply(1, {"address": "x", "resp": "y", "colour": "red"}), "unknown params"),
    (reply(1, {"address": "x"}), "missing params"),
    ('{"params": {}}', "bad format"),
])
def test_malformed_replies_fall_back_to_the_rule_brain_and_are_counted(text, kind):
    agent = buyer_after_quote()
    brain = llm_brain(ScriptedClient([text]), GOAL, [PURCHASE], rule_buyer)
    decision = brain(agent, agent.enabled(), Event(START))
    assert [str(i) for i in decision] == ["rfq(ID=rule-1, item=pen)"]  # the rule brain decided
    assert brain.fallbacks == {"unparseable reply": 1} and brain.rejections == {kind: 1} and brain.calls == 1


def test_a_failed_call_falls_back_too():
    agent = buyer_after_quote()
    brain = llm_brain(ScriptedClient([LLMError("rate limited")]), GOAL, [PURCHASE], rule_buyer)
    assert len(brain(agent, agent.enabled(), Event(START))) == 1
    assert brain.fallbacks == {"call failed (LLMError)": 1} and not brain.rejections


def test_a_reply_in_a_markdown_code_block_is_read_and_bound():
    agent = buyer_after_quote()
    text = "I accept the cheapest quote.\n```json\n" + reply(1, {"address": "Main St", "resp": "ok"}) + "\n```"
    brain = llm_brain(ScriptedClient([text]), GOAL, [PURCHASE], rule_buyer)
    (instance,) = brain(agent, agent.enabled(), Event(START))
    assert str(instance) == "accept(ID=fcba, item=pen, price=4, address=Main St, resp=ok)"
    assert agent.emit(instance) and not brain.fallbacks


def test_a_tool_request_runs_locally_and_its_result_reaches_the_next_call():
    agent = buyer_after_quote()
    save = {"tool": "save_state_to_memory", "args": {"agent_name": "Buyer", "key": "price_strategy",
                                                     "value": "accept above $50"}}
    client = ScriptedClient([reply(None, tools=[save, {"tool": "rm_rf", "args": {}}]),
                             reply(1, {"address": "Main St", "resp": "ok"})])
    toolbox = Toolbox()
    brain = llm_brain(client, GOAL, [PURCHASE], rule_buyer, toolbox=toolbox)
    (instance,) = brain(agent, agent.enabled(), Event(START))
    assert instance.schema.name == "accept" and brain.calls == 2 and brain.nulls == 0
    assert toolbox.memory == {"Buyer": {"price_strategy": "accept above $50"}}
    roles = [role for role, _ in client.requests[1].messages]
    follow_up = client.requests[1].messages[-1][1]
    assert roles == ["user", "assistant", "user"] and follow_up.startswith("TOOL RESULTS:")
    assert 'saved price_strategy for Buyer: "accept above $50"' in follow_up
    assert "ERROR: unknown tool 'rm_rf'" in follow_up


def test_tool_rounds_are_limited():
    agent = buyer_after_quote()
    asking = reply(None, tools=[{"tool": "save_state_to_memory", "args": {"agent_name": "a", "key": "k", "value": 1}}])
    brain = llm_brain(ScriptedClient([asking], repeat=True), GOAL, [PURCHASE], rule_buyer, max_tool_rounds=2)
    assert brain(agent, agent.enabled(), Event(START)) == [] and brain.calls == 3 and brain.nulls == 1


def test_the_adapter_refuses_a_binding_that_contradicts_an_in_parameter():
    model, brain, _ = enact(script=lambda request: scripted_buyer(request, wrong_item=True))
    assert model.violations == 1 and "item='laptop'" in model.agent("ahoy").violations[0]
    assert "accept" not in set(messages_frame(model)["message"]) and not brain.fallbacks


def test_external_events_are_shown_until_a_new_enactment_handles_them():
    lamp = {"timestamp": "2025-01-01T10:00:00", "event_type": "new_order", "message": "Buy a lamp under $30",
            "priority": "high", "metadata": {"item": "lamp"}}
    events = [lamp]
    agent = buyer_after_quote()
    client = ScriptedClient([reply(1, {"address": "Main St", "resp": "ok"}), reply(0, {"item": "lamp"}),
                             reply(None)])
    brain = llm_brain(client, GOAL, [PURCHASE], rule_buyer, events=events)
    brain(agent, agent.enabled(), Event(START))  # accept continues the pen enactment: the event stays
    assert events == [lamp] and brain.handled == []
    (rfq,) = brain(agent, agent.enabled(), Event(START))  # rfq starts a new enactment: handled
    assert rfq.payload["item"] == "lamp" and events == [] and brain.handled == [lamp]
    brain(agent, agent.enabled(), Event(START))
    prompts = [r.messages[0][1] for r in client.requests]
    assert all("=== PENDING EXTERNAL EVENTS ===" in p and "Buy a lamp under $30" in p for p in prompts[:2])
    assert '[HIGH] new_order at 2025-01-01T10:00:00' in prompts[0] and '"item": "lamp"' in prompts[0]
    assert "(No pending external events at this time)" in prompts[2]


def test_five_null_decisions_in_a_row_end_the_run_and_no_options_means_no_call():
    agent = buyer_after_quote()
    client = ScriptedClient([reply(None)] * 4 + [reply(1, {"address": "x", "resp": "y"})] + [reply(None)] * 5)
    brain = llm_brain(client, GOAL, [PURCHASE], rule_buyer)
    for _ in range(4):
        brain(agent, agent.enabled(), Event(RECEIVED))
    assert not brain.done()
    brain(agent, agent.enabled(), Event(RECEIVED))  # a choice resets the count
    for _ in range(NULL_LIMIT):
        assert not brain.done()
        brain(agent, agent.enabled(), Event(RECEIVED))
    assert brain.done() and brain.nulls == 9
    assert brain(agent, [], Event(RECEIVED)) == [] and brain.calls == 10


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
REPLIES = st.fixed_dictionaries({}, optional={
    "choice": st.none() | st.integers(-2, 6) | JSON,
    "params": st.dictionaries(st.sampled_from(["ID", "item", "price", "address", "resp", "x"]), JSON, max_size=4)
    | JSON,
    "tool_requests": st.lists(st.fixed_dictionaries({"tool": JSON, "args": JSON}) | JSON, max_size=2) | JSON,
})


def near_miss_params(option: int):
    """Parameters for option ``option`` after a quote, often right, so that accepted replies are tested too."""
    schema = PURCHASE.message(["rfq", "accept", "reject", "completed"][option])
    value = st.text(max_size=5) | st.integers()
    return st.fixed_dictionaries({n: value | st.none() for n in schema.outs},
                                 optional={n: value for n in (*schema.ins, "colour")})


NEAR_MISSES = st.integers(-1, 4).flatmap(lambda i: near_miss_params(i % 4).map(lambda p: {"choice": i, "params": p}))


@settings(max_examples=300, deadline=None)
@given(text=st.text() | (REPLIES | NEAR_MISSES).map(json.dumps) | st.tuples(st.text(max_size=20), REPLIES).map(
    lambda t: f"{t[0]}\n```json\n{json.dumps(t[1])}\n```"))
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
