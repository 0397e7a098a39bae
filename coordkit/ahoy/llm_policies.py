"""Ahoy's LLM access function (§3.3, Listing 1.4) as a policy: prompt, ask, parse, bind, return.

On each decision the access function writes the user prompt (Listing 1.10) under the system prompt (Listing 1.8)
and asks its client as an :class:`~coordkit.policies.LLMPolicy`, so a failed call or an unusable reply falls back
to the role's rule brain and is counted. Like the authors' code, it reads ``{"choice": int|null, "params": {...},
"tool_requests": [...]}`` (also inside a markdown code block), rejects an invalid choice index, unknown parameters
and missing ones, and fills an unbound key or ``...ID`` out-parameter with a fresh uuid (drawn from the model's
seeded "keys" stream, so runs repeat). The adapter still checks every emission: a wrong binding is refused there.

- **Tools** (Listing 1.5): a reply with tool requests and no choice has its tools run locally
  (:class:`~coordkit.ahoy.tools.Toolbox`) and the results sent back in a follow-up call, up to
  ``max_tool_rounds`` times; a reply with both a choice and tool requests has its tools run and its choice taken.
- **External events**: the pending events of the agent's queue (timestamp, event_type, message, priority,
  metadata) are shown under PENDING EXTERNAL EVENTS until handled. The rule here: an event is handled when the LLM,
  having seen it, chooses a message that starts a new enactment (every key of the message is ``out``, like
  ``rfq``); the earliest event shown then moves to the queue's handled events. A fallback decision is the rule
  brain's, which handles events its own way.
- **Termination** (the authors' code): :meth:`AccessFunction.done` after 5 consecutive null decisions. With no
  enabled message the access function does not call the LLM at all.
"""

import uuid
from collections import Counter
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from coordkit.ahoy.goal import Goal
from coordkit.ahoy.policies import Turn
from coordkit.ahoy.prompts import protocol_of, roles_of, system_prompt, user_prompt
from coordkit.ahoy.tools import Toolbox
from coordkit.bspl.kiko import ProtocolAgent
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance
from coordkit.llm.base import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, json_object
from coordkit.policies import LLMPolicy, Policy

NULL_LIMIT = 5  # consecutive null decisions that end an Ahoy agent's run
Option = tuple[Protocol, Form]


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


def parse_reply(text: str, options: Sequence[Option]) -> Reply:
    """Read and check a reply against the numbered ``options``; raises only :class:`BadReply`."""
    try:
        data = json_object(text)
    except ReplyParseError as error:
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
class Exchange(Turn):
    """One LLM call of a turn: the turn, and the conversation so far (the user prompt; after a tool round, the
    reply and the tool results too). The fallback rule brain reads it as the turn it is."""

    messages: tuple[tuple[str, str], ...] = ()

    @property
    def options(self) -> tuple[Option, ...]:
        """The numbered options of the user prompt: (protocol, form) for each enabled form."""
        return tuple((protocol_of(self.agent, form), form) for form in self.forms)


class AccessFunction(LLMPolicy):
    """The LLM access function for one role; :func:`ahoy_policy` makes it. A decision is one call, or a few when the
    LLM asks for tools; each call counts as the LLM policy's (``llm_decisions`` and ``fallbacks``).

    Also counts ``rejections`` (rejected replies by :class:`BadReply` kind) and ``nulls`` (null decisions);
    ``toolbox`` keeps the tools' memory and log.
    """

    def __init__(
        self,
        client: LLMClient,
        fallback: Policy,
        goal: Goal,
        protocols: Sequence[Protocol],
        *,
        max_tool_rounds: int = 2,
        toolbox: Toolbox | None = None,
    ):
        super().__init__(client, self._request, self._parse, fallback, name="ahoy_llm")
        self.goal, self.protocols, self.max_tool_rounds = goal, list(protocols), max_tool_rounds
        self.toolbox = toolbox or Toolbox()
        self.nulls = self.null_run = 0
        self.rejections: Counter[str] = Counter()
        self._systems: dict[str, str] = {}

    def done(self) -> bool:
        """True after :data:`NULL_LIMIT` null decisions in a row."""
        return self.null_run >= NULL_LIMIT

    def reset(self) -> None:
        super().reset()
        self.null_run = 0

    def system_for(self, agent: ProtocolAgent) -> str:
        """The system prompt, written once per agent (once per enactment, §3.2)."""
        if agent.name not in self._systems:
            names = " and ".join(dict.fromkeys(role for role, _ in roles_of(agent)))
            self._systems[agent.name] = system_prompt(
                names, self.goal.describe(), self.protocols, self.toolbox.signatures()
            )
        return self._systems[agent.name]

    def _request(self, exchange: Exchange) -> LLMRequest:
        return LLMRequest(self.system_for(exchange.agent), exchange.messages, purpose="ahoy.choose_and_bind")

    def _parse(self, text: str, exchange: Exchange) -> Reply:
        try:
            return parse_reply(text, exchange.options)
        except BadReply as error:
            self.rejections[error.kind] += 1
            raise

    def decide(self, turn: Turn) -> list[Instance]:
        conversation = self._converse(turn)
        try:
            exchange = next(conversation)
            while True:
                exchange = conversation.send(super().decide(exchange))
        except StopIteration as end:
            return end.value

    async def decide_async(self, turn: Turn) -> list[Instance]:
        conversation = self._converse(turn)
        try:
            exchange = next(conversation)
            while True:
                exchange = conversation.send(await super().decide_async(exchange))
        except StopIteration as end:
            return end.value

    def _converse(self, turn: Turn) -> Generator[Exchange, Reply | list[Instance], list[Instance]]:
        """The decision as a conversation: yields each call's :class:`Exchange`, receives what the LLM policy made
        of it (a :class:`Reply`, or the rule brain's instances when it fell back) and returns the instances."""
        if not turn.forms:
            return []
        shown = list(turn.agent.events.pending)
        prompt = user_prompt(turn.agent, roles_of(turn.agent), turn.forms, shown)
        exchange = Exchange(turn.agent, turn.forms, turn.event, (("user", prompt),))
        for rounds in range(self.max_tool_rounds + 1):
            reply = yield exchange
            if not isinstance(reply, Reply):
                return reply  # the rule brain decided
            results = [f"- {name}: {self.toolbox.run_tool(name, args)}" for name, args in reply.tool_requests]
            if reply.choice is not None or not results or rounds == self.max_tool_rounds:
                break
            follow_up = (
                "TOOL RESULTS:\n" + "\n".join(results) + "\n\nNow choose an option from the list above, "
                "or return null, in the same response format."
            )
            exchange = replace(exchange, messages=(*exchange.messages, ("assistant", reply.text), ("user", follow_up)))
        return self._enact(turn.agent, exchange.options, reply, shown)

    def _enact(
        self, agent: ProtocolAgent, options: Sequence[Option], reply: Reply, shown: list[dict]
    ) -> list[Instance]:
        """The chosen form bound with the reply's parameters (and fresh uuids for the keys and IDs it left out)."""
        if reply.choice is None:
            self.nulls += 1
            self.null_run += 1
            return []
        self.null_run = 0
        protocol, form = options[reply.choice]
        params = {k: v for k, v in reply.params.items() if v is not None}
        minted = agent.model.streams("keys")
        fresh = {n: str(uuid.UUID(bytes=minted.bytes(16), version=4)) for n in form.missing if n not in params}
        keys = protocol.keys_of(form.schema)
        if shown and keys and all(form.schema.adornment(k) == "out" for k in keys):
            agent.events.handle(shown[0])
        return [Instance.of(protocol, form.schema, **{**dict(form.known), **params, **fresh})]


def ahoy_policy(
    client: LLMClient,
    fallback: Policy,
    goal: Goal,
    protocols: Sequence[Protocol],
    *,
    max_tool_rounds: int = 2,
    toolbox: Toolbox | None = None,
) -> AccessFunction:
    """Ahoy's LLM access function for a role of ``protocols``, pursuing ``goal``; ``fallback`` (the role's rule
    brain) decides when the LLM cannot."""
    return AccessFunction(client, fallback, goal, protocols, max_tool_rounds=max_tool_rounds, toolbox=toolbox)
