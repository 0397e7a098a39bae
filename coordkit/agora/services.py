"""What an Agora agent may use of its network, as one object: :class:`Services`.

An agent (:mod:`~coordkit.agora.agents`) reaches nothing of the model but this: D.1's settings, the transport it
sends on, the task catalogue and the world's seed (its tools' data), the bootstrap negotiation protocol, the
protocols it implements by hand (§4.1), its decisions (:class:`Decisions`: the five roles of
:mod:`~coordkit.agora.roles`, made by an LLM or a rule and charged to the agent that decides, D.3), the sandbox that
runs routines (:class:`Routines`), and the tally of the query being played (:class:`Tally`, a row of the frame).
"""

import dataclasses
from dataclasses import dataclass

from coordkit.agora import llm_policies
from coordkit.agora.costs import ACTIVITY_OF, ChargedClient, CostLog
from coordkit.agora.in_process import TemplateSession
from coordkit.agora.policies import NegotiationObservation, NegotiationTurn
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.roles import CANNOT, NEGOTIATOR, ROLES, Role
from coordkit.agora.routines import RoutinePair, TemplateRoutine
from coordkit.agora.sandbox import DEFAULT_TIMEOUT_S, RoutineError, RoutineSession, routine_session
from coordkit.agora.tasks import Catalogue, keyed_rng
from coordkit.agora.transport import Transport
from coordkit.llm import LLMClient, LLMRequest

UNRELIABLE = "gemini-1.5-pro"  # D.2: the provider whose API failed


class QueryLost(Exception):
    """An LLM provider failed to answer (D.2): the query it served is lost."""


@dataclass(frozen=True)
class Settings:
    """D.1's rules of the run: the arm (``agora`` or ``natural_language``), the thresholds, the failure rate."""

    protocol: str
    check_after: int
    negotiate_after: int
    server_negotiate_after: int
    failure_rate: float


@dataclass
class Tally:
    """What one query did, across every agent it reached (a row of the model's frame)."""

    hops: int = 0
    checked: int = 0
    negotiated: int = 0
    implemented: int = 0
    llm_turns: int = 0
    routine_calls: int = 0
    routine_fallbacks: int = 0
    routine_timeouts: int = 0

    def routine_failed(self, error: RoutineError) -> None:
        """Count a routine that failed (the exchange falls back to natural language), and apart, one the sandbox's
        wall-clock safety net stopped: its outcome depended on the machine's speed, not on what it computes."""
        self.routine_fallbacks += 1
        self.routine_timeouts += int(error.reason == "timeout")


class Decisions:
    """Every decision that stands for an LLM call (§4.2), made and charged to the agent that decides (D.3).

    With ``llm``, each agent decides each role through its own LLM policy, whose client charges the agent the
    replies it gets. Without, the role's rule decides, and the agent is charged the call it replaces: the prompt
    the role would send and the reply that carries the decision made (:data:`CANNOT` when the rule cannot decide).
    """

    def __init__(self, costs: CostLog, llm: LLMClient | None):
        self.costs, self.llm = costs, llm
        self._policies: dict[tuple[str, str], object] = {}  # (agent, role) → the agent's LLM policy

    def enlist(self, agents: list) -> None:
        """Give each of ``agents`` its LLM policies (with an LLM), its client charging the agent."""
        if self.llm is None:
            return
        for agent in agents:
            client = ChargedClient(self.llm, self.costs, agent.name, agent.llm_model)
            self._policies.update({(agent.name, role.name): role.llm_policy(client, role.rule) for role in ROLES})

    def policies(self) -> list:
        """The policies decisions are made with: each agent's LLM policies, or the roles' rules."""
        return list(self._policies.values()) if self._policies else [role.rule for role in ROLES]

    def decide(self, agent, role: Role, seen):
        """``agent``'s ``role`` decision on ``seen``."""
        if self.llm is not None:
            return self._policies[agent.name, role.name].decide(seen)
        return self._by_rule(agent, role.request(seen), role, lambda: role.rule.decide(seen))

    def negotiation_turn(
        self, agent, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...]
    ) -> NegotiationTurn:
        """``agent``'s turn in a negotiation after ``turns``."""
        if self.llm is not None:
            return self._policies[agent.name, NEGOTIATOR.name].turn(seen, turns)
        request = NEGOTIATOR.request(seen, turns)
        return self._by_rule(agent, request, NEGOTIATOR, lambda: NEGOTIATOR.rule.turn(seen, turns))

    def _by_rule(self, agent, request: LLMRequest, role: Role, decide):
        """The rule's decision, charged as the call it replaces."""
        try:
            decision = decide()
        except Exception:
            self._estimate(agent, request, CANNOT)
            raise
        self._estimate(agent, request, role.reply(decision))
        return decision

    def _estimate(self, agent, request: LLMRequest, reply: str) -> None:
        prompt = "\n".join([request.system, *(text for _, text in request.messages)])
        self.costs.estimate(agent.name, agent.llm_model, ACTIVITY_OF[request.purpose], prompt, reply)


class Routines:
    """What runs a routine: a human routine as it is (trusted kit code); LLM-written source in a sandbox session,
    one process per agent and routine, so that a call costs a message, not a fork (routines of different agents
    never share a process); the rule-based programmer's source in the kit's process whenever that gives the
    sandbox's answer, else in a session too (:mod:`~coordkit.agora.in_process`; ``templates_in_process`` False
    sends every call to the sandbox, as the tests that check the two agree do). A call may run ``max_lines`` lines
    of Python, the budget that decides a routine that computes too long, the same on every run; ``timeout_s`` of
    wall time is the sandbox's safety net, which no routine within its budget reaches on a working machine
    (:mod:`~coordkit.agora.sandbox`)."""

    templates_in_process = True

    def __init__(self, max_lines: int, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.max_lines, self.timeout_s = max_lines, timeout_s
        self._sessions: dict[tuple[str, str], RoutineSession | TemplateSession] = {}

    def runnable(self, agent_name: str, routine):
        if callable(routine):
            return routine
        key = (agent_name, routine)
        if key not in self._sessions:
            if isinstance(routine, TemplateRoutine) and self.templates_in_process:
                self._sessions[key] = TemplateSession(routine, self.max_lines, self.timeout_s)
            else:
                self._sessions[key] = routine_session(routine, max_lines=self.max_lines, timeout_s=self.timeout_s)
        return self._sessions[key]

    def close(self) -> None:
        """Stop every session's sandbox process."""
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()


@dataclass
class Services:
    """Everything an agent reaches of its network (module docstring). ``query`` and ``tally``: the query being
    played and what it did so far; :meth:`begin` starts the next."""

    settings: Settings
    channel: Transport
    catalogue: Catalogue
    world_seed: int
    negotiation_document: ProtocolDocument
    standards: dict[str, RoutinePair]  # hash → the routines of a protocol implemented by hand (§4.1)
    decisions: Decisions
    routines: Routines
    query: int = 0
    tally: Tally = dataclasses.field(default_factory=Tally)

    def begin(self, query: int) -> None:
        """Start playing ``query``: its charges and tally start from nothing."""
        self.query, self.tally = query, Tally()
        self.decisions.costs.query = query

    def decide(self, agent, role: Role, seen):
        """``agent``'s ``role`` decision on ``seen``, as one LLM turn (QueryLost when its provider fails, D.2)."""
        self._turn_starts(agent)
        return self.decisions.decide(agent, role, seen)

    def negotiation_turn(self, agent, seen: NegotiationObservation, turns: tuple) -> NegotiationTurn:
        """``agent``'s turn in a negotiation after ``turns`` (Appendix C). Once the agent's LLM fell back, its later
        turns are the rule's, with no LLM turn."""
        speaker = llm_policies.TURNS[len(turns)]
        if any(said.fallback for said in turns if said.speaker == speaker):
            return dataclasses.replace(NEGOTIATOR.rule.turn(seen, turns), fallback=True)
        self._turn_starts(agent)
        return self.decisions.negotiation_turn(agent, seen, turns)

    def _turn_starts(self, agent) -> None:
        """Count an LLM turn of ``agent``, or lose the query if its provider fails (D.2)."""
        self.tally.llm_turns += 1
        if self._provider_fails(agent):
            raise QueryLost(f"{agent.name}'s {agent.llm_model} call failed")

    def _provider_fails(self, agent) -> bool:
        """Whether this LLM call of ``agent`` fails (D.2: only Gemini's API did), drawn per query and call."""
        rate = self.settings.failure_rate
        if self.decisions.llm is not None or agent.llm_model != UNRELIABLE or rate == 0:
            return False
        return bool(keyed_rng(self.world_seed, "failure", self.query, self.tally.llm_turns).random() < rate)

    def close(self) -> None:
        """Stop the servers (over HTTP) and the routines' sandbox processes."""
        self.channel.close()
        self.routines.close()
