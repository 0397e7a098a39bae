"""REP core: transport timing, updaters, consensus, configure's errors, the A2A baseline, and call 1 as every
family asks it."""

import re

import numpy as np
import pytest
from policy_examples import all_examples

from coordkit.llm import ScriptedClient
from coordkit.policies import Classifier, Policy
from coordkit.rep.protocol import (
    MedianConsensus,
    Message,
    NeighbourMulticast,
    NumericalGradUpdater,
    Sensitivity,
    TextualGradUpdater,
    configure,
    configure_a2a,
    configure_protocol,
    run_consensus,
)


class Proposer:
    """A REP agent that decides its θ's x and proposes a fixed value for x."""

    def __init__(self, x: float, proposal: float):
        self.x, self.proposal = x, proposal

    def initial_theta(self):
        return {"x": self.x}

    def decide(self, theta, neighbour_messages):
        return theta["x"], Sensitivity({"propose:x": self.proposal}, f"I propose {self.proposal}")


class CountNeighbours(Policy):
    """A synthesiser proposing x = the number of neighbour texts it read."""

    classifier = Classifier()

    def decide(self, request):
        return {"x": float(len(request.neighbour_texts))}


def ring(n, transport, **options):
    return [
        configure(
            Proposer(float(i), float(10 * i)),
            agent_id=i,
            neighbours=[(i - 1) % n, (i + 1) % n],
            transport=transport,
            **options,
        )
        for i in range(n)
    ]


def play_round(clients, transport):
    for client in clients:
        client.receive()
        client.sync()
    run_consensus(clients)
    for client in clients:
        client.send(*client.decide())
    transport.deliver()


def test_messages_arrive_the_round_after_they_are_sent_and_only_at_neighbours():
    transport = NeighbourMulticast()
    clients = ring(4, transport)
    assert clients[0].receive() == ({}, {})
    play_round(clients, transport)
    decisions, sensitivities = clients[0].receive()
    assert decisions == {3: 3.0, 1: 1.0}
    assert sensitivities[1].values == {"propose:x": 10.0}
    assert transport.messages_sent == 8


def test_numerical_updater_steps_towards_the_mean_proposal():
    updater = NumericalGradUpdater(eta=0.5)
    neighbours = [Message(j, 0, 0, Sensitivity({"propose:x": p})) for j, p in ((1, 4.0), (2, 8.0))]
    # g = mean(θ − θ̂) = mean(0 − 4, 0 − 8) = −6 ; θ ← 0 − 0.5·(−6) = 3
    assert updater.update({"x": 0.0}, neighbours, own=None) == {"x": 3.0}


def test_numerical_updater_clips_to_bounds_and_ignores_unknown_variables():
    updater = NumericalGradUpdater(eta=1.0, bounds={"x": (0.0, 5.0)})
    neighbours = [Message(1, 0, 0, Sensitivity({"propose:x": 9.0, "propose:y": 1.0}))]
    assert updater.update({"x": 0.0}, neighbours, own=None) == {"x": 5.0}


def test_textual_updater_moves_theta_towards_the_synthesised_proposal():
    updater = TextualGradUpdater(CountNeighbours(), eta=0.5)
    neighbours = [Message(j, 0, 0, Sensitivity({}, "text")) for j in range(4)]
    assert updater.update({"x": 0.0}, neighbours, own=None) == {"x": 2.0}


def test_median_consensus_gives_every_agent_the_coordinate_wise_median():
    agreed = MedianConsensus().apply({1: {"a": 1.0, "b": 9.0}, 2: {"a": 5.0, "b": 0.0}, 3: {"a": 100.0, "b": 3.0}})
    assert all(theta == {"a": 5.0, "b": 3.0} for theta in agreed.values())


def test_a_ring_with_consensus_agrees_after_one_round():
    transport = NeighbourMulticast()
    clients = ring(5, transport, consensus="median_coordinate")
    play_round(clients, transport)
    play_round(clients, transport)
    assert len({client.theta["x"] for client in clients}) == 1


@pytest.mark.parametrize(
    ("option", "value", "valid"),
    [
        ("updater", "gradient", "'numerical_grad', 'textual_grad'"),
        ("transport", "slim", "'in_process'"),
        ("consensus", "mean", "'median_coordinate'"),
    ],
)
def test_configure_rejects_unknown_names_and_lists_the_valid_ones(option, value, valid):
    with pytest.raises(ValueError, match=f"unknown {option} '{value}'.*{valid}"):
        configure(Proposer(0, 0), agent_id=0, neighbours=[], **{option: value})


def test_configure_accepts_component_objects():
    transport, updater = NeighbourMulticast(), NumericalGradUpdater(eta=1.0)
    client = configure(
        Proposer(0, 0), agent_id=0, neighbours=[], transport=transport, updater=updater, consensus=MedianConsensus()
    )
    assert client.transport is transport and client.updater is updater


def test_configure_protocol_gives_each_protocol_its_client_on_the_same_link():
    transport = NeighbourMulticast()
    link = {"neighbours": [1], "transport": transport, "consensus": "median_coordinate"}
    a2a = configure_protocol("a2a", Talker(), agent_id=0, **link)
    numerical = configure_protocol("rep_numerical", Proposer(0, 1), eta=0.25, agent_id=1, **link)
    textual = configure_protocol("rep_textual", Proposer(0, 1), synthesiser=CountNeighbours(), agent_id=2, **link)
    assert a2a.protocol == "a2a" and {numerical.protocol, textual.protocol} == {"rep"}
    assert isinstance(numerical.updater, NumericalGradUpdater) and numerical.updater.eta == 0.25
    assert isinstance(textual.updater, TextualGradUpdater) and isinstance(textual.updater.synthesiser, CountNeighbours)
    assert all(c.transport is transport and isinstance(c.consensus, MedianConsensus) for c in (a2a, numerical, textual))
    with pytest.raises(ValueError, match="unknown protocol 'base_stock'; valid protocols are 'a2a'"):
        configure_protocol("base_stock", Talker(), agent_id=3, **link)


def test_step_sizes_are_checked():
    with pytest.raises(ValueError, match="eta"):
        NumericalGradUpdater(eta=0)
    with pytest.raises(ValueError, match="eta"):
        TextualGradUpdater(CountNeighbours(), eta=2)


class Talker:
    def private_state(self):
        return {"x": 1.0}

    def decide(self, neighbour_messages):
        return len(neighbour_messages), "because"


def test_a2a_shares_decisions_and_reasoning_but_never_updates_its_state():
    transport = NeighbourMulticast()
    clients = [configure_a2a(Talker(), agent_id=i, neighbours=[1 - i], transport=transport) for i in range(2)]
    for _ in range(3):
        play_round(clients, transport)
    decisions, reasoning = clients[0].receive()
    assert decisions == {1: 1} and reasoning == {1: "because"}
    assert clients[0].sync() == {"x": 1.0}
    assert all(m.sensitivity is None for m in transport.receive(0))


CALL_ONE = [example for example in all_examples() if example.id.startswith(("llm_rep_", "llm_a2a_"))]


@pytest.mark.parametrize("example", CALL_ONE, ids=lambda example: example.id)
def test_call_one_sends_the_replys_words_and_the_rules_numbers_in_every_family(example):
    """Appendix A's call 1 (coordkit.rep.llm_calls): the LLM decides and writes the message; a REP sensitivity's
    numbers, which the numerical updater and the neighbours read, stay the fallback rule's."""
    words = "words only the reply has"

    def reply(request):
        return re.sub(r"(SENSITIVITY|REASONING):.*", rf"\1: {words}", example.reply(request), flags=re.DOTALL)

    policy = example.make(np.random.default_rng(0), ScriptedClient(reply))
    observation = example.observations()[-1]
    _, message = policy.decide(observation)
    assert (policy.llm_decisions, policy.fallback_count) == (1, 0)
    if isinstance(message, Sensitivity):
        assert message.text == words and message.values == policy.fallback.decide(observation)[1].values
    else:
        assert message == words and example.id.startswith("llm_a2a_")
