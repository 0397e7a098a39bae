"""Ahoy's Prompt Builder (§3.2, Appendix D): the system prompt, written once per enactment (Listings 1.8–1.9),
and the user prompt, written afresh for every decision (Listing 1.10).

The user prompt lists the enabled messages as numbered options, ``i) Protocol/message [in: k=v, ...] - out:
['a', 'b']``: the LLM answers ``{"choice": i, "params": {...}, "tool_requests": [...]}``
(:mod:`coordkit.ahoy.llm_policies` reads it). The paper prints the option without ``in`` parameters as
``0) Purchase/rfq -out: [...]``; here every option reads ``- out:``.
"""

import json
from collections.abc import Sequence

from coordkit.bspl.kiko import ProtocolAgent
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form

BSPL_SEMANTICS = """\
BSPL defines multiagent protocols where agents play roles and coordinate via
information causality.

PARAMETER ADORNMENTS (three types):
1. **in** (Causal): Must already know from prior messages. Information provided
  from previous messages in the protocol.
2. **out** (Generation): You generate this binding; it appears once per enactment,
  creating mutual exclusion. Your role generates unique values for instances.
3. **nil** (Negative): Must NOT know this binding. Used for mutually exclusive
  paths where an agent cannot act until certain information remains unknown.

Key parameters identify protocol instances. Messages are ordered by information
flow according to causal dependencies."""  # Listing 1.3

EXTERNAL_EVENTS = """\
EXTERNAL EVENTS: External events represent new tasks that occur during protocol
enactment. Each external event is treated as a separate transaction and may
trigger new message sequences according to the protocol."""

RESPONSE = """\
RESPONSE: {"choice": 0|null, "params": {...}, "tool_requests": [
  {"tool": "...", "args": {...}}]}"""

RULE = "RULE: Choose if viable. Null only if no options."

RULER = "=" * 60


def system_prompt(
    agent_name_roles: str,
    goal_text: str,
    protocols: Sequence[Protocol],
    tools: str = "save_state_to_memory(agent_name, key, value)",
) -> str:
    """Listing 1.8 filled in: who the agent is ("Buyer"), the user's goal (the paper's input.txt), BSPL's semantics,
    external events, ``tools`` (:meth:`Toolbox.signatures`), the response format, the rule, and each protocol's
    annotated source text."""
    definitions = "\n\n".join(f"--- {p.name.upper()} PROTOCOL ---\n\n{p.text.strip()}" for p in protocols)
    return "\n".join(
        [
            f"You are a {agent_name_roles} agent.",
            "",
            "Your user wants you to fulfill the goal described in input.txt contents:",
            goal_text,
            "",
            "To accomplish this goal, you may need to interact with other agents on the",
            "basis of interaction protocols.",
            "",
            "The following is an explanation of the environment in which you operate:",
            "",
            BSPL_SEMANTICS,
            "",
            EXTERNAL_EVENTS,
            "",
            f"TOOLS: {tools}",
            "",
            RESPONSE,
            "",
            RULE,
            "",
            RULER,
            "PROTOCOL DEFINITIONS (BSPL specs with inline message explanations):",
            RULER,
            "",
            definitions,
        ]
    )


def roles_of(agent: ProtocolAgent) -> list[tuple[str, str]]:
    """(role, protocol name) for every role the agent plays, e.g. ``[("Buyer", "Purchase")]``."""
    return [(role, name) for name, state in agent.states.items() for role in state.roles]


def protocol_of(agent: ProtocolAgent, form: Form) -> Protocol:
    """The protocol (among the agent's) whose message ``form`` is."""
    for state in agent.states.values():
        if any(m is form.schema for m in state.protocol.messages):
            return state.protocol
    raise KeyError(f"{agent.name} plays no protocol with the message {form.schema.name}")


def option_line(index: int, protocol: Protocol, form: Form) -> str:
    """``1) Purchase/completed [in: ID=..., item=pen, price=4] - out: ['satisfaction']``."""
    known = f" [in: {', '.join(f'{k}={v}' for k, v in form.known)}]" if form.known else ""
    return f"{index}) {protocol.name}/{form.schema.name}{known} - out: {list(form.missing)}"


def _history(agent: ProtocolAgent) -> list[str]:
    entries = [instance for state in agent.states.values() for instance in state.history]
    lines = ["=== MESSAGE HISTORY ===", ""]
    for number, instance in enumerate(entries, start=1):
        schema = instance.schema
        lines.append(f"{number}. {schema.name} (from {schema.sender} to {schema.recipient})")
        lines += [f"   {name}: {value}" for name, value in instance.bindings]
        lines.append("")
    if not entries:
        lines += ["(No messages yet)", ""]
    lines.append(f"=== END HISTORY ({len(entries)} messages) ===")
    return lines


def _events(events: Sequence[dict]) -> list[str]:
    if not events:
        return ["(No pending external events at this time)"]
    lines = ["=== PENDING EXTERNAL EVENTS ==="]
    for number, event in enumerate(events, start=1):
        priority = str(event.get("priority", "normal")).upper()
        lines.append(
            f"{number}. [{priority}] {event.get('event_type', 'event')} at {event.get('timestamp', '?')}: "
            f"{event.get('message', '')}"
        )
        if event.get("metadata"):
            lines.append(f"   metadata: {json.dumps(event['metadata'], default=str)}")
    lines.append(f"=== END EVENTS ({len(events)} pending) ===")
    return lines


def user_prompt(
    agent: ProtocolAgent, roles: Sequence[tuple[str, str]], forms: Sequence[Form], events: Sequence[dict] = ()
) -> str:
    """Listing 1.10: who decides, the pending external events, the numbered message history, the enabled messages
    as options, and the response format (its example binds option 0's missing parameters)."""
    acting = " and ".join(f"{role} in {protocol}" for role, protocol in roles)
    role_line = ", ".join(f"{role} (in {protocol})" for role, protocol in roles)
    example = {
        "choice": 0,
        "params": {name: "value" for name in forms[0].missing} if forms else {},
        "tool_requests": [],
    }
    return "\n".join(
        [
            f"You are agent '{agent.name} (as {acting})'. Choose at most one option, or return null.",
            "Your role requires making decisions. When choosing an option, always provide values for all required "
            "parameters.",
            "",
            f"Role: {role_line}",
            "",
            *_events(events),
            "",
            *_history(agent),
            "",
            "Options:",
            *(option_line(i, protocol_of(agent, form), form) for i, form in enumerate(forms)),
            "",
            "Response format JSON:",
            f"- To choose an option WITH parameters: {json.dumps(example)}",
            '- To decline all options: {"choice": null, "params": {}, "tool_requests": []}',
        ]
    )
