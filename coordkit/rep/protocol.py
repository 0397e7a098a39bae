"""The Ripple Effect Protocol's core (REP paper, §3): messages, transport, updaters, consensus and the client.

A round for every agent i on a network G:

1. ``receive``  — collect the neighbours' messages (d_j, s_j) sent last round;
2. ``sync``     — aggregate them: θ_i ← θ_i − η·Agg_φ({s_j : j ∈ N_i}, θ_i)            (§3.2);
3. (optional)     coordinate-wise median consensus over all agents: θ̄ = Median({θ_i})   (§3.2);
4. ``decide``   — (d_i, s_i) = π_i(θ_i, c_i);
5. ``send``     — broadcast (d_i, s_i) to the neighbours.

The A2A baseline runs the same transport, topology and consensus, but its messages carry a decision and
free-form reasoning only: no sensitivities and no coordination variables to update (§4, Table 2).
"""

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Protocol

from coordkit.parameters import Choice

Theta = dict[str, float]


@dataclass(frozen=True)
class Sensitivity:
    """How a decision would change if conditions shifted: numbers keyed by name, and the same in words."""

    values: Mapping[str, float] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Message:
    """What one agent tells its neighbours in a round. REP fills ``sensitivity``; A2A fills ``reasoning``."""

    sender: Hashable
    round: int
    decision: Any
    sensitivity: Sensitivity | None = None
    reasoning: str = ""


class Multicast(Protocol):
    """Moves messages between neighbours. A message sent in round t is received in round t + 1."""

    def register(self, agent_id: Hashable, neighbours: Iterable[Hashable]) -> None: ...
    def send(self, message: Message) -> None: ...
    def receive(self, agent_id: Hashable) -> list[Message]: ...
    def deliver(self) -> None: ...


class NeighbourMulticast:
    """Synchronous multicast to graph neighbours inside one Python process.

    ``send`` queues; ``deliver`` (called once per round, after every agent has sent) makes the queued messages
    visible, so all agents of a round decide on the same information whatever order they run in.
    """

    def __init__(self):
        self.neighbours: dict[Hashable, tuple[Hashable, ...]] = {}
        self._outbox: list[Message] = []
        self._inbox: dict[Hashable, list[Message]] = defaultdict(list)
        self.messages_sent = 0

    def register(self, agent_id: Hashable, neighbours: Iterable[Hashable]) -> None:
        self.neighbours[agent_id] = tuple(neighbours)

    def send(self, message: Message) -> None:
        if message.sender not in self.neighbours:
            raise KeyError(f"agent {message.sender!r} is not registered with this transport; call register() first")
        self._outbox.append(message)

    def deliver(self) -> None:
        self._inbox = defaultdict(list)
        for message in self._outbox:
            for neighbour in self.neighbours[message.sender]:
                self._inbox[neighbour].append(message)
                self.messages_sent += 1
        self._outbox = []

    def receive(self, agent_id: Hashable) -> list[Message]:
        return list(self._inbox.get(agent_id, ()))


class Updater(Protocol):
    """Agg_φ and the step: the new coordination variables from the old ones and the neighbours' sensitivities."""

    def update(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta: ...
    async def update_async(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta: ...


class NumericalGradUpdater:
    """φ = averaging: each numeric sensitivity proposes a value θ̂_j,k under the key ``propose:<k>``.

    Agg_φ({s_j}, θ_i) = mean_j (θ_i,k − θ̂_j,k) over the neighbours and the agent's own sensitivity — the
    gradient of ½·mean_j ‖θ_i − θ̂_j‖² — and θ ← θ − η·g (§3.2: "a numeric rule such as weighted averaging or
    distributed gradient descent"). With 0 < η ≤ 1 each step moves θ part of the way to the mean proposal.
    Variables named in ``bounds`` are clipped into their range.
    """

    name = "numerical_grad"

    def __init__(self, eta: float = 0.5, bounds: Mapping[str, tuple[float, float]] | None = None):
        if not 0 < eta <= 1:
            raise ValueError(f"the step size eta must be in (0, 1], got {eta}")
        self.eta = eta
        self.bounds = dict(bounds or {})

    def update(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta:
        signals = [m.sensitivity for m in neighbours if m.sensitivity is not None]
        signals += [own] if own is not None else []
        updated = dict(theta)
        for name, value in theta.items():
            key = f"propose:{name}"
            proposals = [s.values[key] for s in signals if key in s.values]
            if proposals:
                gradient = sum(value - p for p in proposals) / len(proposals)
                updated[name] = value - self.eta * gradient
        return clip(updated, self.bounds)

    async def update_async(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta:
        return self.update(theta, neighbours, own)


class TextualGradUpdater:
    """φ = a synthesiser that reads the sensitivities' text and proposes new coordination variables.

    The synthesiser is a policy (an LLM with a rule-based fallback, or rules alone) taking a
    :class:`SynthesisRequest` and returning a θ proposal; the step is θ ← θ − η·(θ − proposal), TextGrad-style.
    """

    name = "textual_grad"

    def __init__(self, synthesiser, eta: float = 1.0, bounds: Mapping[str, tuple[float, float]] | None = None):
        if not 0 < eta <= 1:
            raise ValueError(f"the textual step size eta must be in (0, 1], got {eta}")
        self.synthesiser = synthesiser
        self.eta = eta
        self.bounds = dict(bounds or {})

    def update(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta:
        return self._step(theta, self.synthesiser.decide(self._request(theta, neighbours, own)))

    async def update_async(self, theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> Theta:
        return self._step(theta, await self.synthesiser.decide_async(self._request(theta, neighbours, own)))

    @staticmethod
    def _request(theta: Theta, neighbours: list[Message], own: Sensitivity | None) -> "SynthesisRequest":
        texts = tuple((m.sender, m.sensitivity.text) for m in neighbours if m.sensitivity is not None)
        return SynthesisRequest(dict(theta), own.text if own else "", texts)

    def _step(self, theta: Theta, proposal: Theta) -> Theta:
        updated = {k: v - self.eta * (v - float(proposal.get(k, v))) for k, v in theta.items()}
        return clip(updated, self.bounds)


@dataclass(frozen=True)
class SynthesisRequest:
    """What the textual updater asks its synthesiser (REP Appendix A, API call 2)."""

    theta: Theta
    own_text: str
    neighbour_texts: tuple[tuple[Hashable, str], ...]


class MedianConsensus:
    """Coordinate-wise median over all agents' coordination variables (§3.2): every agent gets θ̄."""

    name = "median_coordinate"

    def apply(self, thetas: Mapping[Hashable, Theta]) -> dict[Hashable, Theta]:
        if not thetas:
            return {}
        names = next(iter(thetas.values())).keys()
        consensus = {name: float(median(theta[name] for theta in thetas.values())) for name in names}
        return {agent_id: dict(consensus) for agent_id in thetas}


def clip(theta: Theta, bounds: Mapping[str, tuple[float, float]]) -> Theta:
    """θ with every bounded variable clipped into its [low, high] range."""
    return {k: min(max(v, bounds[k][0]), bounds[k][1]) if k in bounds else v for k, v in theta.items()}


class REPAgent(Protocol):
    """What REP wraps: an agent that decides from its coordination variables (its cognition is its own)."""

    def initial_theta(self) -> Theta: ...
    def decide(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[Any, Sensitivity]: ...
    async def decide_async(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[Any, Sensitivity]: ...


class REPClient:
    """One agent's end of the protocol, with the paper's loop (§3.3)::

    neighbour_msg, neighbour_sensitivity = client.receive()
    client.sync(neighbour_sensitivity)
    decision, sensitivity = client.decide()
    client.send(decision=decision, sensitivity=sensitivity)
    """

    protocol = "rep"

    def __init__(
        self,
        agent: REPAgent,
        agent_id: Hashable,
        neighbours: Iterable[Hashable],
        transport: Multicast,
        updater: Updater,
        consensus,
    ):
        transport.register(agent_id, neighbours)
        self.agent = agent
        self.agent_id = agent_id
        self.transport = transport
        self.updater = updater
        self.consensus = consensus
        self.theta: Theta = dict(agent.initial_theta())
        self.round = 0
        self._own: Sensitivity | None = None
        self._inbox: list[Message] = []

    def receive(self) -> tuple[dict[Hashable, Any], dict[Hashable, Sensitivity]]:
        """The neighbours' decisions and sensitivities from the previous round, keyed by sender."""
        self._inbox = self.transport.receive(self.agent_id)
        decisions = {m.sender: m.decision for m in self._inbox}
        sensitivities = {m.sender: m.sensitivity for m in self._inbox if m.sensitivity is not None}
        return decisions, sensitivities

    def sync(self, neighbour_sensitivity: Mapping[Hashable, Sensitivity] | None = None) -> Theta:
        """Aggregate the neighbours' sensitivities into this agent's coordination variables.

        The argument mirrors the paper's loop; the client aggregates the full messages it last received.
        """
        if self._inbox:
            self.theta = self.updater.update(self.theta, self._inbox, self._own)
        return self.theta

    async def sync_async(self) -> Theta:
        """:meth:`sync` for a round whose LLM calls run concurrently."""
        if self._inbox:
            self.theta = await self.updater.update_async(self.theta, self._inbox, self._own)
        return self.theta

    def decide(self) -> tuple[Any, Sensitivity]:
        """(d_i, s_i) = π_i(θ_i, c_i): the wrapped agent decides from the current coordination variables."""
        decision, self._own = self.agent.decide(dict(self.theta), list(self._inbox))
        return decision, self._own

    async def decide_async(self) -> tuple[Any, Sensitivity]:
        decision, self._own = await self.agent.decide_async(dict(self.theta), list(self._inbox))
        return decision, self._own

    def send(self, decision: Any, sensitivity: Sensitivity) -> None:
        self.transport.send(Message(self.agent_id, self.round, decision, sensitivity=sensitivity))
        self.round += 1


class A2AAgent(Protocol):
    """What the A2A baseline wraps: an agent that decides and explains, with private state only."""

    def private_state(self) -> Theta: ...
    def decide(self, neighbour_messages: list[Message]) -> tuple[Any, str]: ...
    async def decide_async(self, neighbour_messages: list[Message]) -> tuple[Any, str]: ...


class A2AClient:
    """The baseline: same loop and transport, but messages are (decision, reasoning) and ``sync`` learns nothing.

    ``theta`` is the agent's private state; a configured consensus acts on it exactly as on REP's θ.
    """

    protocol = "a2a"

    def __init__(
        self, agent: A2AAgent, agent_id: Hashable, neighbours: Iterable[Hashable], transport: Multicast, consensus
    ):
        transport.register(agent_id, neighbours)
        self.agent = agent
        self.agent_id = agent_id
        self.transport = transport
        self.consensus = consensus
        self.theta: Theta = dict(agent.private_state())
        self.round = 0
        self._inbox: list[Message] = []

    def receive(self) -> tuple[dict[Hashable, Any], dict[Hashable, str]]:
        self._inbox = self.transport.receive(self.agent_id)
        return {m.sender: m.decision for m in self._inbox}, {m.sender: m.reasoning for m in self._inbox}

    def sync(self, neighbour_reasoning=None) -> Theta:
        """Free-form reasoning cannot be aggregated into shared variables: nothing changes (§5)."""
        return self.theta

    async def sync_async(self) -> Theta:
        return self.theta

    def decide(self) -> tuple[Any, str]:
        return self.agent.decide(list(self._inbox))

    async def decide_async(self) -> tuple[Any, str]:
        return await self.agent.decide_async(list(self._inbox))

    def send(self, decision: Any, reasoning: str = "") -> None:
        self.transport.send(Message(self.agent_id, self.round, decision, reasoning=reasoning))
        self.round += 1


TRANSPORTS: dict[str, Callable[[], Multicast]] = {"in_process": NeighbourMulticast}
UPDATERS: dict[str, Callable[..., Updater]] = {
    "numerical_grad": NumericalGradUpdater,
    "textual_grad": TextualGradUpdater,
}
CONSENSUS: dict[str, Callable[[], MedianConsensus]] = {"median_coordinate": MedianConsensus}


def configure(
    agent: REPAgent,
    *,
    agent_id: Hashable,
    neighbours: Iterable[Hashable],
    transport: str | Multicast = "in_process",
    updater: str | Updater = "numerical_grad",
    consensus: str | MedianConsensus | None = None,
    **updater_options,
) -> REPClient:
    """Wrap ``agent`` in a :class:`REPClient` (§3.3) linked to its graph ``neighbours``.

    Components are chosen by name or passed as objects; ``updater_options`` (e.g. ``eta``, ``bounds``,
    ``synthesiser``) go to a named updater. Agents talk only if they share one transport object: a transport
    named by string is a new, private medium, so pass the same object to every agent of a network.
    """
    return REPClient(
        agent,
        agent_id,
        neighbours,
        _resolve("transport", transport, TRANSPORTS),
        _resolve("updater", updater, UPDATERS, **updater_options),
        _resolve("consensus", consensus, CONSENSUS),
    )


def configure_a2a(
    agent: A2AAgent,
    *,
    agent_id: Hashable,
    neighbours: Iterable[Hashable],
    transport: str | Multicast = "in_process",
    consensus: str | MedianConsensus | None = None,
) -> A2AClient:
    """Wrap ``agent`` in the A2A baseline client: the same transport and consensus choices as :func:`configure`."""
    return A2AClient(
        agent,
        agent_id,
        neighbours,
        _resolve("transport", transport, TRANSPORTS),
        _resolve("consensus", consensus, CONSENSUS),
    )


def configure_protocol(
    protocol: str,
    agent: REPAgent | A2AAgent,
    *,
    synthesiser=None,
    eta: float = 0.5,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    **link,
) -> REPClient | A2AClient:
    """The client a family's ``protocol`` names, on the same ``link`` (agent_id, neighbours, transport, consensus)
    for every protocol (§4, Table 2): "a2a" wraps an A2A agent in the baseline; "rep_numerical" and
    "rep_textual" wrap a REP agent with the numerical updater (step ``eta``) or the textual one (``synthesiser``)."""
    if protocol == "a2a":
        return configure_a2a(agent, **link)
    if protocol == "rep_numerical":
        return configure(agent, updater="numerical_grad", eta=eta, bounds=bounds, **link)
    if protocol == "rep_textual":
        return configure(agent, updater="textual_grad", synthesiser=synthesiser, bounds=bounds, **link)
    raise ValueError(f"unknown protocol {protocol!r}; valid protocols are 'a2a', 'rep_numerical', 'rep_textual'")


def consensus_parameter(default: str | None, doc: str) -> Choice:
    """The declaration of a model's optional consensus (§3.2): None, or the coordinate-wise median."""
    return Choice(
        "consensus",
        default,
        (None, *CONSENSUS),
        labels={None: "none", "median_coordinate": "median"},
        doc=doc,
    )


def run_consensus(clients: Iterable[REPClient | A2AClient]) -> None:
    """Apply the clients' (shared) consensus rule to all their θ at once; a no-op when none is configured."""
    clients = list(clients)
    rule = clients[0].consensus if clients else None
    if rule is None:
        return
    agreed = rule.apply({c.agent_id: c.theta for c in clients})
    for client in clients:
        client.theta = agreed[client.agent_id]


def _resolve(kind: str, choice, registry: Mapping[str, Callable], **options):
    if choice is None or not isinstance(choice, str):
        if options:
            raise ValueError(f"options {sorted(options)} only apply to a {kind} chosen by name")
        return choice
    if choice not in registry:
        valid = ", ".join(repr(name) for name in registry)
        raise ValueError(f"unknown {kind} {choice!r}; valid {kind}s are: {valid} (or pass an object)")
    return registry[choice](**options)
