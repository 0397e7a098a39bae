"""Ahoy's LLM access function (§3.3, Listing 1.4) as a Kiko decision maker: prompt, ask, parse, bind, return.

On each decision the brain writes the user prompt (Listing 1.10) under the system prompt (Listing 1.8) and asks
its client through an :class:`~coordkit.policies.LLMPolicy`, so a failed call or an unusable reply falls back to
the rule brain and is counted. Like the authors' code, it reads ``{"choice": int|null, "params": {...},
"tool_requests": [...]}`` (also inside a markdown code block), rejects an invalid choice index, unknown parameters
and missing ones, and fills an unbound key or ``...ID`` out-parameter with a fresh uuid (drawn from the model's
seeded ``rng``, so runs repeat). The adapter still checks every emission: a wrong binding is refused there.

- **Tools** (Listing 1.5): a reply with tool requests and no choice has its tools run locally
  (:class:`~coordkit.ahoy.tools.Toolbox`) and the results sent back in a follow-up call, up to
  ``max_tool_rounds`` times; a reply with both a choice and tool requests has its tools run and its choice taken.
- **External events**: the dicts in the shared ``events`` list (timestamp, event_type, message, priority,
  metadata) are shown under PENDING EXTERNAL EVENTS until handled. The rule here: an event is handled when the LLM,
  having seen it, chooses a message that starts a new enactment (every key of the message is ``out``, like
  ``rfq``); the earliest event shown is then removed from the list and kept in ``handled``. A fallback decision
  handles no event.
- **Termination** (the authors' code): :meth:`LLMBrain.done` after 5 consecutive null decisions. With no enabled
  message the brain does not call the LLM at all.
"""

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from coordkit.ahoy.goal import Goal
from coordkit.ahoy.prompts import protocol_of, roles_of, system_prompt, user_prompt
from coordkit.ahoy.tools import Toolbox
from coordkit.bspl.kiko import DecisionMaker, Event, ProtocolAgent
from coordkit.bspl.parser import load
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance
from coordkit.llm.base import LLMClient, LLMRequest
from coordkit.llm.parsing import json_object
from coordkit.policies import LLMPolicy, ReplyParseError, RulePolicy

NULL_LIMIT = 5  # consecutive null decisions that end an Ahoy agent's run


class BadReply(ReplyParseError):
    """A reply the access function rejects, with a short ``kind``: "not JSON", "bad format", "invalid choice",
    "unknown params" or "missing params"."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


@dataclass(frozen=True)
class Reply:
    """A parsed reply: the chosen option (None: decline), its parameters and the requested tools."""

    choice: int | None
    params: dict[str, Any]
    tool_requests: tuple[tuple[Any, Any], ...]  # (tool name, args) as the model wrote them
    text: str


def fillable(protocol: Protocol, name: str) -> bool:
    """A key or ID parameter, which the access function binds itself when the model leaves it out."""
    return name in protocol.keys or name.endswith("ID")


def parse_reply(text: str, options: Sequence[tuple[Protocol, Form]]) -> Reply:
    """Read and check a reply against the numbered ``options``; raises only :class:`BadReply`."""
    try:
        data = json_object(text)
    except (ValueError, RecursionError) as error:  # ReplyParseError, or a number too long for int()
        raise BadReply("not JSON", str(error)) from None
    choice, params, requests = data.get("choice"), data.get("params") or {}, data.get("tool_requests") or []
    if not isinstance(params, dict) or not isinstance(requests, list):
        raise BadReply("bad format", "params must be an object and tool_requests a list")
    tools = tuple((r.get("tool"), r.get("args", {})) if isinstance(r, dict) else (r, None) for r in requests)
    if "choice" not in data:
        raise BadReply("bad format", 'the reply has no "choice"')
    if choice is None:
        return Reply(None, {}, tools, text)
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(options):
        raise BadReply("invalid choice", f"{choice!r} is not an option index 0..{len(options) - 1}")
    protocol, form = options[choice]
    unknown = sorted(set(params) - set(form.schema.ins) - set(form.schema.outs))
    if unknown:
        raise BadReply("unknown params", f"{form.schema.name} has no parameters {unknown}")
    missing = [n for n in form.missing if params.get(n) is None and not fillable(protocol, n)]
    if missing:
        raise BadReply("missing params", f"{form.schema.name} needs values for {missing}")
    return Reply(choice, params, tools, text)


@dataclass(frozen=True)
class Turn:
    """What one LLM call sees: the agent, its options, the triggering event and the conversation so far."""

    agent: ProtocolAgent
    options: tuple[tuple[Protocol, Form], ...]
    event: Event
    messages: tuple[tuple[str, str], ...]


class LLMBrain:
    """The decision maker ``llm_brain`` returns; call it as ``(agent, forms, event) -> [Instance]``.

    Counts: ``calls`` (LLM calls), ``fallbacks`` (by the policy's reason), ``rejections`` (rejected replies by
    :class:`BadReply` kind), ``nulls`` (null decisions); ``handled`` keeps the external events it handled and
    ``toolbox`` the tools' memory and log.
    """

    def __init__(self, client: LLMClient, goal: Goal, protocols: Sequence[Protocol], fallback: DecisionMaker, *,
                 events: list[dict] | None = None, max_tool_rounds: int = 2, toolbox: Toolbox | None = None):
        self.goal, self.protocols, self.max_tool_rounds = goal, list(protocols), max_tool_rounds
        self.events = events if events is not None else []
        self.toolbox = toolbox or Toolbox()
        self.policy = LLMPolicy(client, self._request, self._parse,
                                RulePolicy(lambda t: list(fallback(t.agent, [f for _, f in t.options], t.event) or ()),
                                           name="ahoy rule brain"), name="ahoy llm")
        self.calls = self.nulls = self.null_run = 0
        self.rejections: Counter[str] = Counter()
        self.handled: list[dict] = []
        self._systems: dict[str, str] = {}

    @property
    def fallbacks(self) -> Counter[str]:
        return self.policy.fallbacks

    @property
    def llm_calls(self) -> int:
        return self.calls

    def _pool(self, agent: ProtocolAgent) -> list[dict]:
        """The pending external events: the agent's own queue when it has one (the scenarios'), else ``events``."""
        queue = getattr(agent, "events", None)
        return queue.pending if queue is not None else self.events

    def done(self) -> bool:
        """True after :data:`NULL_LIMIT` null decisions in a row."""
        return self.null_run >= NULL_LIMIT

    def system_for(self, agent: ProtocolAgent) -> str:
        """The system prompt, written once per agent (once per enactment, §3.2)."""
        if agent.name not in self._systems:
            names = " and ".join(dict.fromkeys(role for role, _ in roles_of(agent)))
            self._systems[agent.name] = system_prompt(names, self.goal.describe(), self.protocols,
                                                      self.toolbox.signatures())
        return self._systems[agent.name]

    def _request(self, turn: Turn) -> LLMRequest:
        return LLMRequest(self.system_for(turn.agent), turn.messages, purpose="ahoy.choose_and_bind")

    def _parse(self, text: str, turn: Turn) -> Reply:
        try:
            return parse_reply(text, turn.options)
        except BadReply as error:
            self.rejections[error.kind] += 1
            raise

    def __call__(self, agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        if not forms:
            return []
        shown = list(self._pool(agent))
        options = tuple((protocol_of(agent, form), form) for form in forms)
        turn = Turn(agent, options, event, (("user", user_prompt(agent, roles_of(agent), forms, shown)),))
        for rounds in range(self.max_tool_rounds + 1):
            self.calls += 1
            reply = self.policy.decide(turn)
            if not isinstance(reply, Reply):
                return reply  # the rule brain's decision
            results = [f"- {name}: {self.toolbox.run_tool(name, args)}" for name, args in reply.tool_requests]
            if reply.choice is not None or not results or rounds == self.max_tool_rounds:
                break
            follow_up = "TOOL RESULTS:\n" + "\n".join(results) + "\n\nNow choose an option from the list above, " \
                        "or return null, in the same response format."
            turn = Turn(agent, options, event, (*turn.messages, ("assistant", reply.text), ("user", follow_up)))
        return self._decide(agent, options, reply, shown)

    def _decide(self, agent: ProtocolAgent, options, reply: Reply, shown: list[dict]) -> list[Instance]:
        if reply.choice is None:
            self.nulls += 1
            self.null_run += 1
            return []
        self.null_run = 0
        protocol, form = options[reply.choice]
        params = {k: v for k, v in reply.params.items() if v is not None}
        fresh = {n: str(uuid.UUID(bytes=agent.model.rng.bytes(16), version=4))
                 for n in form.missing if n not in params}
        keys = protocol.keys_of(form.schema)
        if shown and keys and all(form.schema.adornment(k) == "out" for k in keys):
            self._handle(self._pool(agent), shown[0])
        return [Instance.of(protocol, form.schema, **{**dict(form.known), **params, **fresh})]

    def _handle(self, pool: list[dict], event: dict) -> None:
        for index, pending in enumerate(pool):
            if pending is event:
                del pool[index]
                self.handled.append(event)
                return


def llm_brain(client: LLMClient, goal: Goal, protocols: Sequence[Protocol], fallback: DecisionMaker, *,
              events: list[dict] | None = None, max_tool_rounds: int = 2,
              toolbox: Toolbox | None = None) -> LLMBrain:
    """Ahoy's LLM access function for ``agent.decision(...)``; ``fallback`` decides when the LLM cannot."""
    return LLMBrain(client, goal, protocols, fallback, events=events, max_tool_rounds=max_tool_rounds,
                    toolbox=toolbox)


PROTOCOL_FILES = {"Purchase": "purchase", "Logistics": "logistics", "FlexiblePurchase": "flexible_purchase_corrected"}


def llm_brains(client: LLMClient):
    """A brain factory for :mod:`coordkit.ahoy.scenarios`: every Ahoy role gets the LLM access function, with its
    rule brain as the fallback (``scenarios.branching(brain_factory=llm_brains(client))``)."""
    from coordkit.ahoy.brains import brain_factory as rule_brains

    def factory(protocol_name: str, role: str, goal: Goal) -> LLMBrain:
        return llm_brain(client, goal, [load(PROTOCOL_FILES[protocol_name])], rule_brains(protocol_name, role, goal))

    return factory
