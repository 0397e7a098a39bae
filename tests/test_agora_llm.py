"""Agora's LLM policies: every role through the real anthropic SDK and the local fake server, answered by the
stand-in, decides as its rule policy; unusable replies fall back, counted; routines are compiled, never run; the
builders are pure and carry D.3's activity. No network, no key."""

import asyncio
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from coordkit.agora import llm_policies, roles, stand_in
from coordkit.agora.llm_policies import (
    PURPOSES,
    negotiation_request,
    negotiator_policy,
    parse_routine,
    programmer_policy,
    programmer_request,
    querier_policy,
    querier_request,
    responder_policy,
    responder_request,
    suitability_policy,
    suitability_request,
)
from coordkit.agora.model import WeatherDemo
from coordkit.agora.policies import (
    SERVER,
    USER,
    Compose,
    KeywordSuitability,
    NegotiationObservation,
    ProgrammingObservation,
    Read,
    RoutineProgrammer,
    SchemaNegotiator,
    SuitabilityObservation,
    TemplateQuerier,
    TemplateResponder,
)
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.routines import run, schema_of
from coordkit.agora.tasks import example_input, load_catalogue
from coordkit.llm import LLMRequest, ScriptedClient
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer
from coordkit.llm.parsing import ReplyParseError

sys.path.insert(0, str(Path(__file__).parent))
from policy_examples import agora as examples  # noqa: E402

NONSENSE = "Let me think about it... no idea."

# role: (factory, rule policy, observations, the activity of its requests)
ROLES = {
    "querier": (querier_policy, TemplateQuerier(), examples.querier_observations, "agora.natural_language"),
    "responder": (responder_policy, TemplateResponder(), examples.responder_observations, "agora.natural_language"),
    "negotiator": (negotiator_policy, SchemaNegotiator(), examples.negotiation_observations, "agora.negotiation"),
    "suitability": (suitability_policy, KeywordSuitability(), examples.suitability_observations, "agora.checks"),
    "programmer": (programmer_policy, RoutineProgrammer(), examples.programming_observations, "agora.implementation"),
}
BUILDERS = {
    "querier": querier_request,
    "responder": responder_request,
    "negotiator": negotiation_request,
    "suitability": suitability_request,
    "programmer": programmer_request,
}


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")


def stand_in_answer(request) -> str:
    """The stand-in's answer to what the fake server received (system prompt and messages, as sent)."""
    return stand_in.reply(LLMRequest(request.system, request.messages))


@pytest.mark.parametrize("role", ROLES)
def test_each_role_through_the_sdk_and_the_stand_in_decides_as_its_rule(role):
    factory, rule, observations, purpose = ROLES[role]
    with FakeLLMServer(stand_in_answer) as server:
        policy = factory(AnthropicClient(base_url=server.url, max_retries=0))
        decisions = [policy.decide(seen) for seen in observations()]
    assert decisions == [rule.decide(seen) for seen in observations()]
    assert policy.fallback_count == 0 and policy.llm_decisions == len(decisions)
    calls = 3 * len(decisions) if role == "negotiator" else len(decisions)  # Appendix C: three turns
    assert len(server.requests) == calls


def test_the_negotiation_is_three_turns_user_server_user_and_its_document_carries_the_schema():
    seen = examples.negotiation_observations()[0]
    client = ScriptedClient(stand_in.reply)
    negotiation = negotiator_policy(client).decide(seen)
    systems = [request.system for request in client.requests]
    assert systems == [
        llm_policies.NEGOTIATOR_USER_SYSTEM,
        llm_policies.NEGOTIATOR_SERVER_SYSTEM,
        llm_policies.NEGOTIATOR_USER_SYSTEM,
    ]
    assert [m.speaker for m in negotiation.turns] == [USER, SERVER, USER]
    assert schema_of(negotiation.document).task == seen.task.name
    assert negotiation.document.name == seen.task.name and negotiation.document.description
    # each turn's prompt carries what was said before it
    assert negotiation.turns[0].text in client.requests[1].messages[0][1]
    assert negotiation.turns[1].text in client.requests[2].messages[0][1]


def test_the_negotiation_runs_async_too():
    observations = examples.negotiation_observations()[:2]
    with FakeLLMServer(stand_in_answer) as server:
        policy = negotiator_policy(AnthropicClient(base_url=server.url, max_retries=0))

        async def both():
            return await asyncio.gather(*(policy.decide_async(seen) for seen in observations))

        decisions = asyncio.run(both())
    assert decisions == [SchemaNegotiator().decide(seen) for seen in observations] and policy.fallback_count == 0


@pytest.mark.parametrize("role", ROLES)
def test_a_nonsense_reply_falls_back_to_the_rule_counted(role):
    factory, rule, observations, _ = ROLES[role]
    with FakeLLMServer(NONSENSE) as server:
        policy = factory(AnthropicClient(base_url=server.url, max_retries=0))
        decisions = [policy.decide(seen) for seen in observations()]
    assert decisions == [rule.decide(seen) for seen in observations()]
    assert policy.fallbacks == {"unparseable reply": len(decisions)} and policy.llm_decisions == 0
    assert len(server.requests) == len(decisions)  # a dialogue stops at its first unusable turn


def test_a_failed_call_falls_back_counted():
    seen = examples.negotiation_observations()[0]
    client = ScriptedClient([stand_in.reply(negotiation_request(seen))])  # the opening, then no replies left
    policy = negotiator_policy(client)
    assert policy.decide(seen) == SchemaNegotiator().decide(seen)
    assert policy.fallbacks == {"call failed (LLMError)": 1} and len(client.requests) == 2


def test_a_server_specification_without_a_schema_block_ends_the_dialogue():
    seen = examples.negotiation_observations()[0]
    opening = stand_in.reply(negotiation_request(seen))
    client = ScriptedClient([opening, "Agreed: send the date and the place, I send the forecast."])
    policy = negotiator_policy(client)
    assert policy.decide(seen) == SchemaNegotiator().decide(seen)
    assert policy.fallback_count == 1 and "schema block" in policy.last_failure["unparseable reply"]


def test_a_finalised_protocol_without_its_schema_block_is_refused():
    seen = examples.negotiation_observations()[0]
    rule = SchemaNegotiator().decide(seen)
    final = stand_in.reply(negotiation_request(seen, rule.turns[:2]))
    prose_only = final[: final.index("```json")]
    with pytest.raises(ReplyParseError):
        llm_policies.parse_turn(prose_only, seen, rule.turns[:2])
    with pytest.raises(ReplyParseError):  # the labels out of order
        llm_policies.parse_turn(final.replace("AGREEMENT:", "AGREED -").replace("NAME:", "AGREEMENT:"), seen, ())
    assert llm_policies.parse_turn(final, seen, rule.turns[:2]) == rule.turns[2]


def programming_view():
    return examples.programming_observations()[0]


def routine_reply(source: str) -> str:
    return f"Here is the routine.\n\n```python\n{source}\n```\n"


def test_a_routine_with_a_syntax_error_falls_back():
    seen = programming_view()
    policy = programmer_policy(
        ScriptedClient([routine_reply("def handle(event):\n    return json.dumps({'return': 1}")])
    )
    assert policy.decide(seen) == RoutineProgrammer().decide(seen)
    assert policy.fallback_count == 1 and "does not compile" in policy.last_failure["unparseable reply"]


@pytest.mark.parametrize(
    "reply",
    [
        routine_reply("def answer(event):\n    return event"),  # no handle
        routine_reply("class Routine:\n    def handle(self, event):\n        return event"),  # not at the top level
        "def handle(event):\n    return event",  # no fenced block
        routine_reply("x = '\0'"),  # a null byte: compile() refuses it with a ValueError
        "```json\n{}\n```",  # a block, but not Python
    ],
)
def test_a_routine_reply_must_define_handle_in_a_fenced_block(reply):
    with pytest.raises(ReplyParseError):
        parse_routine(reply)


def test_the_parser_compiles_a_routine_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('ran')\n\ndef handle(event):\n    return event"
    assert parse_routine(routine_reply(source)) == source + "\n" and not marker.exists()
    assert parse_routine("NONE") is None and parse_routine("**NONE.**") is None


def test_the_routines_the_stand_in_writes_through_the_sdk_run_in_the_sandbox():
    catalogue = load_catalogue()
    task = examples.tasks()[0]
    document = SchemaNegotiator().decide(NegotiationObservation(task)).document
    with FakeLLMServer(stand_in_answer) as server:
        policy = programmer_policy(AnthropicClient(base_url=server.url, max_retries=0))
        user = policy.decide(ProgrammingObservation(document, USER))
        server_side = policy.decide(ProgrammingObservation(document, SERVER, "perform"))
    instance = example_input(task, np.random.default_rng(3))

    def perform(**fields):
        return catalogue.answer(task, fields)

    def send(body):
        return run(server_side, body, {"perform": perform})

    assert run(user, instance, {"send": send}) == catalogue.answer(task, instance)


def test_the_suitability_reply_names_a_candidate_or_none():
    seen = examples.suitability_observations()[0]
    chosen = seen.candidates[2]
    assert llm_policies.parse_choice(f"PROTOCOL: {chosen.hash}", seen) == chosen
    assert llm_policies.parse_choice(f"**PROTOCOL:** `{chosen.hash}`", seen) == chosen
    assert llm_policies.parse_choice("PROTOCOL: NONE", seen) is None
    assert llm_policies.parse_choice("Checked.\nprotocol: none of them", seen) is None
    odd = next(d for d in (ProtocolDocument(f"document {i}") for i in range(1000)) if d.hash[0] in "+/")
    assert llm_policies.parse_choice(f"PROTOCOL: {odd.hash}", SuitabilityObservation(seen.task, (odd,))) == odd
    for reply in ["PROTOCOL: " + "A" * 27 + "=", "I would pick the second one.", "PROTOCOL: the weather one"]:
        with pytest.raises(ReplyParseError):
            llm_policies.parse_choice(reply, seen)


def test_a_read_reply_must_fit_the_schema_of_what_its_reader_needs():
    task = examples.tasks()[0]
    instance = example_input(task, np.random.default_rng(0))
    output = load_catalogue().answer(task, instance)
    assert task.output["required"]  # so that {} misses fields
    wrong_type = dict(output, **{task.output["required"][0]: {"not": "a value"}})
    replies = ["{}", json.dumps(dict(output, not_a_field=1)), json.dumps(wrong_type), f"Sure: {json.dumps(output)}"]
    querier = querier_policy(ScriptedClient(replies))
    seen = Read(task, TemplateResponder().decide(Compose(task, output)))
    assert [querier.decide(seen) for _ in replies] == [output] * len(replies)
    assert querier.fallbacks == {"unparseable reply": 3} and querier.llm_decisions == 1


def test_the_stand_in_reads_only_what_rules_write():
    task = examples.tasks()[0]
    seen = Read(task, "Hi! Could you tell me the usual for tomorrow, please?")
    assert stand_in.reply(responder_request(seen)) == stand_in.CANNOT
    assert stand_in.reply(LLMRequest.user("You are a helpful assistant.", "Hello")) == stand_in.CANNOT
    policy = responder_policy(ScriptedClient(stand_in.reply))
    with pytest.raises(ReplyParseError):  # the fallback cannot read prose either: the agent's problem, not hidden
        policy.decide(seen)
    assert policy.fallback_count == 1


def every_request():
    """Each builder on each of its example observations (the negotiator: each of the dialogue's three turns)."""
    for role, (_, rule, observations, purpose) in ROLES.items():
        for seen in observations():
            if role == "negotiator":
                messages = rule.decide(seen).turns
                for turn in range(3):
                    yield role, purpose, lambda seen=seen, said=messages[:turn]: negotiation_request(seen, said)
            else:
                yield role, purpose, lambda seen=seen, role=role: BUILDERS[role](seen)


def test_builders_are_deterministic_and_carry_the_activity():
    seen = set()
    for _, purpose, build in every_request():
        first, again = build(), build()
        assert first == again and first.purpose == purpose and first.system and first.messages[0][1]
        seen.add(first.purpose)
    assert seen == set(PURPOSES)


def test_the_prompts_give_what_each_decision_needs():
    task = examples.tasks()[0]
    document = SchemaNegotiator().decide(NegotiationObservation(task)).document
    server_prompt = programmer_request(ProgrammingObservation(document, SERVER, "lookup")).messages[0][1]
    user_prompt = programmer_request(ProgrammingObservation(document, USER)).messages[0][1]
    assert "lookup(...)" in server_prompt and "send(body)" in user_prompt and document.text in user_prompt
    assert all('{"call": "<tool name>"' in p and '{"return": <' in p for p in (server_prompt, user_prompt))
    check = suitability_request(SuitabilityObservation(task, (document,))).messages[0][1]
    assert document.hash in check and document.name in check and document.description in check
    opening = negotiation_request(NegotiationObservation(task)).messages[0][1]
    assert task.description in opening and "receives a string and returns a string" in opening


def test_a_rule_document_in_prose_gets_no_routine_from_the_stand_in():
    seen = ProgrammingObservation(examples.PROSE, USER)
    assert stand_in.reply(programmer_request(seen)) == "NONE"
    assert programmer_policy(ScriptedClient(stand_in.reply)).decide(seen) is None


def test_the_weather_demo_with_an_llm_plays_as_the_rules_and_charges_each_reply_to_its_speaker():
    rules = WeatherDemo(queries=6, rng=0).run().frame()
    with FakeLLMServer(stand_in_answer) as server:
        model = WeatherDemo(queries=6, rng=0, llm=AnthropicClient(base_url=server.url, max_retries=0)).run()
    frame, charges = model.frame(), model.costs.frame()
    assert frame["mode"].tolist() == rules["mode"].tolist() and frame["correct"].iloc[1:].all()
    assert len(server.requests) == len(charges) == frame["llm_turns"].sum() == model.llm_calls
    assert model.llm_fallbacks == 0
    assert not charges["estimated"].any() and model.summary()["estimated"] is False
    turns = charges[charges["activity"] == "negotiation"]["agent"].tolist()
    assert turns == ["alice", "weather", "alice"]  # Appendix C: user, server, user, each charged to its speaker
    assert frame["cost"].sum() == pytest.approx(model.costs.ledger.spent_usd)


def test_a_network_whose_llm_answers_nonsense_falls_back_counted_and_still_answers():
    with FakeLLMServer(NONSENSE) as server:
        model = WeatherDemo(queries=6, rng=0, llm=AnthropicClient(base_url=server.url, max_retries=0)).run()
    frame = model.frame()
    assert frame["correct"].iloc[1:].all() and model.llm_fallbacks == frame["llm_turns"].sum() > 0
    assert sum(model.fallback_reasons.values()) == model.llm_fallbacks


@pytest.mark.parametrize("role", [r for r in roles.ROLES if r is not roles.NEGOTIATOR], ids=lambda r: r.name)
def test_a_roles_reply_writer_is_what_its_parser_reads_back(role):
    observations = {"querier": examples.querier_observations, "responder": examples.responder_observations}.get(
        role.name
    )
    observations = (
        observations
        or {"suitability": examples.suitability_observations, "programmer": examples.programming_observations}[
            role.name
        ]
    )
    parse = role.llm_policy(ScriptedClient([]), role.rule).parse
    for seen in observations():
        decision = role.rule.decide(seen)
        assert parse(role.reply(decision), seen) == decision


def test_each_negotiation_turns_reply_is_what_the_turn_parser_reads_back():
    for seen in examples.negotiation_observations():
        turns = SchemaNegotiator().decide(seen).turns
        for index, said in enumerate(turns):
            assert llm_policies.parse_turn(roles.NEGOTIATOR.reply(said), seen, turns[:index]) == said


@pytest.mark.parametrize(
    ("client_model", "charged_as"),
    [("claude-haiku-4-5", "claude-haiku-4-5"), ("a-local-model", "gpt-4o")],
)
def test_a_call_is_charged_at_the_model_asked_for_or_the_agents_when_unpriced(client_model, charged_as):
    """A run on Claude is charged at Claude's price, not at the agent's D.2 model's (which the paper's agents had);
    a model the price table does not know (a local server) falls back to the D.2 model's price."""
    from coordkit.agora.costs import ChargedClient, CostLog

    log = CostLog()
    client = ChargedClient(ScriptedClient(["fine"], repeat=True, model=client_model), log, "alice", "gpt-4o")
    client.complete(LLMRequest.user("you negotiate", "hello", purpose="agora.negotiation"))
    (charge,) = log.charges
    assert (charge.model, charge.activity) == (charged_as, "negotiation")
    assert charge.usd == log.ledger.prices.cost(charged_as, charge.input_tokens, charge.output_tokens)
