"""The LLM player's policy (§3.2): a persona as the system prompt; the rules, the delays, the state and the recent
history as the user prompt; a JSON reply with an estimate of the opponent, a forecast and the action.

The prompt discloses both delays and gives the player one goal, its own points: nothing suggests exploiting a
slow opponent. Temperature 1.0, as in the paper (Table 1). An unusable reply falls back to ``fallback``.
"""

from coordkit.delay.game import UNKNOWN, C, D, Payoffs, Timing
from coordkit.delay.policies import Observation, Persona
from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, json_object
from coordkit.policies import LLMPolicy, Policy

PROMPT = """You are Player {me} in a real-time Prisoner's Dilemma against Player {other}. Every {tick:g} s you choose
to cooperate (C) or defect (D). Every second, both players earn points from the actions in effect on the server:
both C: {R:g} each; both D: {P:g} each; a defector facing a cooperator gets {T:g} and the cooperator {S:g}.
Communication delay: a change of your action takes effect on the server, and is seen by Player {other}, {mine:g} s
after you choose it; Player {other}'s changes take {theirs:g} s. Your goal is to maximise your own total points.

CURRENT STATE (server time {now:g} s):
- Action in effect: you {own}, Player {other} {opponent}
- Your latest choice: {last}
- Points: you {own_points:g}, Player {other} {opponent_points:g}

HISTORY (changes of the actions in effect, last {memory:g} s, server time):
{history}

Reply with JSON only:
{{"estimate": "<Player {other}'s personality and tendencies, at most 100 words>",
 "forecast": "<what follows if you choose C, and if you choose D, at most 100 words>",
 "action": "C" or "D"}}"""

_NAMES = {C: "C", D: "D", UNKNOWN: "unknown (nothing has reached the server yet)"}


def request(observation: Observation, persona: Persona, payoffs: Payoffs, timing: Timing) -> LLMRequest:
    """The prompt of one tick: the persona as the system prompt, the game and its state as the user prompt."""
    other = "B" if observation.player == "A" else "A"
    history = "\n".join(f"- {c.time_s:g} s: Player {c.player} -> {c.action}" for c in observation.history)
    prompt = PROMPT.format(
        me=observation.player,
        other=other,
        tick=timing.tick_s,
        R=payoffs.reward,
        P=payoffs.punishment,
        T=payoffs.temptation,
        S=payoffs.sucker,
        mine=observation.own_delay_s,
        theirs=observation.opponent_delay_s,
        now=observation.time_s,
        own=_NAMES[observation.own_effective],
        opponent=_NAMES[observation.opponent_effective],
        last=_NAMES[observation.own_last_choice],
        own_points=observation.own_payoff,
        opponent_points=observation.opponent_payoff,
        memory=timing.memory_s,
        history=history or "(no changes)",
    )
    return LLMRequest.user(persona.text(), prompt, temperature=1.0, max_tokens=400, purpose="delay.decide")


def parse_action(text: str, observation: Observation | None = None) -> str:
    """The reply's "action" as C or D ("cooperate" and "defect" are accepted too)."""
    action = str(json_object(text).get("action", "")).strip().upper()
    if action in ("C", "COOPERATE"):
        return C
    if action in ("D", "DEFECT"):
        return D
    raise ReplyParseError(f"the action {action!r} is neither C nor D")


def llm_policy(client: LLMClient, fallback: Policy, persona: Persona, payoffs: Payoffs, timing: Timing) -> LLMPolicy:
    """An LLM player with ``persona`` that knows ``payoffs`` and ``timing``; ``fallback`` (the persona's rule, in the
    model) decides when the call fails or the reply has no usable action."""
    return LLMPolicy(
        client,
        lambda observation: request(observation, persona, payoffs, timing),
        parse_action,
        fallback,
        name="llm_player",
    )
