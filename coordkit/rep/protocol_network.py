"""One model's REP network: what every client shares whatever the protocol (§4, Table 2), and the round they play.

A family builds one :class:`ProtocolNetwork` per model, links each agent to it with :meth:`~ProtocolNetwork.client`,
and plays §3.3's loop for all its agents at once with :meth:`~ProtocolNetwork.round`.
"""

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from coordkit.policies import Policy, decision_round
from coordkit.rep.protocol import (
    A2AAgent,
    A2AClient,
    MedianConsensus,
    Multicast,
    REPAgent,
    REPClient,
    configure_protocol,
    run_consensus,
)


@dataclass(frozen=True)
class ProtocolNetwork:
    """The transport and the consensus every client of a model shares, and REP's updater settings: the textual
    updater's ``synthesiser``, the numerical updater's step ``eta`` and θ's ``bounds`` (§3.2)."""

    transport: Multicast
    consensus: str | MedianConsensus | None
    synthesiser: Policy
    eta: float
    bounds: Mapping[str, tuple[float, float]]

    def client(
        self, protocol: str, agent: REPAgent | A2AAgent, agent_id: Hashable, neighbours: Iterable[Hashable]
    ) -> REPClient | A2AClient:
        """``agent`` linked to its graph ``neighbours`` by the client ``protocol`` names: "a2a", "rep_numerical" or
        "rep_textual" (:func:`~coordkit.rep.protocol.configure_protocol`)."""
        return configure_protocol(
            protocol,
            agent,
            synthesiser=self.synthesiser,
            eta=self.eta,
            bounds=self.bounds,
            agent_id=agent_id,
            neighbours=neighbours,
            transport=self.transport,
            consensus=self.consensus,
        )

    def round(
        self, clients: Sequence[REPClient | A2AClient], *, concurrent: bool, max_concurrency: int | None
    ) -> list[tuple[Any, Any]]:
        """receive → sync → (consensus) → decide → send for every client, then the transport delivers (§3.1, §3.3).

        With LLM agents (``concurrent``) the syncs, then the decisions, each run as one round of concurrent calls
        (:func:`~coordkit.policies.decision_round`): the agents of a round act on the same information, so their
        calls are independent. Returns every client's (decision, sensitivity or reasoning), in order.
        """
        for client in clients:
            client.receive()
        decision_round("sync", clients, concurrent=concurrent, max_concurrency=max_concurrency)
        run_consensus(clients)
        decisions = decision_round("decide", clients, concurrent=concurrent, max_concurrency=max_concurrency)
        for client, (decision, signal) in zip(clients, decisions):
            client.send(decision, signal)
        self.transport.deliver()
        return decisions
