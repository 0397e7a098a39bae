"""The continuous prisoner's dilemma with communication delay as a Mesa model: one trial of two players (§3).

Each tick t (Δt seconds):

1. each player observes the server after tick t − 1: both effective actions, both cumulative payoffs, and the
   change points of the last ``memory_s`` seconds;
2. each chooses C or D (a change it makes reaches the server ``delay`` seconds later);
3. the server's effective actions for tick t are the choices made ``delay`` ticks ago (Unknown before then);
4. each player earns its payoff on the effective actions.
"""

import mesa
import pandas as pd

from coordkit.delay.game import C, D, UNKNOWN, Payoffs, Timing, outcome
from coordkit.delay.llm_player import llm_policy
from coordkit.delay.policies import Always, Change, GrimTrigger, Observation, Persona, SimplifiedModel, TitForTat
from coordkit.llm import LLMClient, aio
from coordkit.policies import LLMUse, Policy

POLICIES = ("simplified", "tit_for_tat", "grim_trigger", "always_cooperate", "always_defect", "persona", "llm")


class Player(mesa.Agent):
    """Player A or B: its delay, its policy, its choices so far and what it has earned."""

    def __init__(self, model: "DelayedDilemma", name: str, delay_ticks: int, policy: Policy):
        super().__init__(model)
        self.name = name
        self.delay_ticks = delay_ticks
        self.policy = policy
        self.choices: list[str] = []
        self.payoff = 0.0

    def effective(self, tick: int) -> str:
        """Its action on the server at ``tick``: the choice made ``delay`` ticks earlier."""
        made = tick - self.delay_ticks
        return self.choices[made] if made >= 0 else UNKNOWN

    def observe(self, opponent: "Player") -> Observation:
        model, tick = self.model, self.model.tick
        horizon = model.time_of(tick) - model.timing.memory_s
        return Observation(
            tick=tick,
            time_s=model.time_of(tick),
            player=self.name,
            own_delay_s=model.timing.tick_s * self.delay_ticks,
            opponent_delay_s=model.timing.tick_s * opponent.delay_ticks,
            own_effective=self.effective(tick - 1),
            opponent_effective=opponent.effective(tick - 1),
            own_payoff=self.payoff,
            opponent_payoff=opponent.payoff,
            own_last_choice=self.choices[-1] if self.choices else UNKNOWN,
            history=tuple(change for change in model.changes if change.time_s > horizon),
        )


class DelayedDilemma(LLMUse, mesa.Model):
    """One trial of the continuous prisoner's dilemma with communication delay.

    Args:
        delay_a, delay_b: each player's delay in seconds (whole ticks); ``delay_b=None`` copies ``delay_a``.
        policy_a, policy_b: one of :data:`POLICIES`; ``policy_b=None`` copies ``policy_a``. "simplified" is the
            paper's simplified model with ``p`` and ``alpha``; "persona" the kit's rule-based stand-in for a
            persona; "llm" an LLM player with the persona, through ``llm``.
        p, alpha: the simplified model's tit-for-tat probability and defection incentive per second of delay.
        persona_a, persona_b: Big Five traits (the paper: A=1, C=−1, N=1 for both).
        payoffs: T, R, P, S (5, 3, 1, 0).
        duration_s, tick_s, memory_s: effective play (60 s), Δt (1 s) and the memory horizon t_m (15 s).
        llm: an LLMClient for "llm" players; their unusable replies fall back to the persona's rule, counted.
        rng: seed.
    """

    def __init__(
        self,
        delay_a: float = 0.0,
        delay_b: float | None = None,
        policy_a: str = "simplified",
        policy_b: str | None = None,
        p: float = 0.9,
        alpha: float = 0.1,
        persona_a: Persona = Persona(),
        persona_b: Persona | None = None,
        payoffs: Payoffs = Payoffs(),
        duration_s: float = 60.0,
        tick_s: float = 1.0,
        memory_s: float = 15.0,
        llm: LLMClient | None = None,
        rng=None,
    ):
        super().__init__(rng=rng)
        self.timing = Timing(delay_a, delay_a if delay_b is None else delay_b, duration_s, tick_s, memory_s)
        self.payoffs = payoffs
        self.llm = llm
        self.tick = 0
        self.changes: list[Change] = []
        delays = self.timing.delays
        specs = [(policy_a, persona_a), (policy_b or policy_a, persona_b or persona_a)]
        self.players = [
            Player(self, name, delay, self._policy(kind, persona, p, alpha))
            for name, delay, (kind, persona) in zip("AB", delays, specs)
        ]
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "tick",
                "time_s": lambda m: m.time_of(m.tick),
                "choice_a": lambda m: m.players[0].choices[-1],
                "choice_b": lambda m: m.players[1].choices[-1],
                "effective_a": lambda m: m.players[0].effective(m.tick),
                "effective_b": lambda m: m.players[1].effective(m.tick),
                "outcome": lambda m: outcome(m.players[0].effective(m.tick), m.players[1].effective(m.tick)),
                "payoff_a": lambda m: m.players[0].payoff,
                "payoff_b": lambda m: m.players[1].payoff,
            }
        )

    def _policy(self, kind: str, persona: Persona, p: float, alpha: float) -> Policy:
        rules = {
            "simplified": lambda: SimplifiedModel(p, alpha, self.rng),
            "tit_for_tat": TitForTat,
            "grim_trigger": GrimTrigger,
            "always_cooperate": lambda: Always(C),
            "always_defect": lambda: Always(D),
            "persona": lambda: persona.rule(self.rng),
        }
        if kind == "llm":
            if self.llm is None:
                raise ValueError("an 'llm' player needs llm=<an LLMClient> (see coordkit.llm.session.open_llm)")
            return llm_policy(self.llm, persona, self.payoffs, self.timing, persona.rule(self.rng))
        if kind not in rules:
            raise ValueError(f"unknown policy {kind!r}; choose one of {', '.join(POLICIES)}")
        return rules[kind]()

    def time_of(self, tick: int) -> float:
        return tick * self.timing.tick_s

    def step(self) -> None:
        a, b = self.players
        observations = (a.observe(b), b.observe(a))
        if self.llm is None:
            choices = [player.policy.decide(obs) for player, obs in zip(self.players, observations)]
        else:  # both players' calls at once
            calls = (player.policy.decide_async(obs) for player, obs in zip(self.players, observations))
            choices = aio.run(aio.gather_bounded(calls, 2))
        for player, choice in zip(self.players, choices):
            before = player.effective(self.tick - 1)
            player.choices.append(choice)
            if player.effective(self.tick) != before:
                self.changes.append(Change(self.time_of(self.tick), player.name, player.effective(self.tick)))
        effective = a.effective(self.tick), b.effective(self.tick)
        a.payoff += self.payoffs.of(*effective)
        b.payoff += self.payoffs.of(*reversed(effective))
        self.datacollector.collect(self)
        self.tick += 1
        if self.tick >= self.timing.total_ticks:
            self.running = False

    def run(self) -> "DelayedDilemma":
        """Play the whole trial (effective play plus the longer delay) and return the model."""
        while self.running:
            self.step()
        return self

    def policies(self) -> list[Policy]:
        return [player.policy for player in self.players]


def ticks_frame(model: DelayedDilemma) -> pd.DataFrame:
    """One row per tick: tick, time_s, choice_a/b, effective_a/b, outcome, cumulative payoff_a/b."""
    return model.datacollector.get_model_vars_dataframe().reset_index(drop=True)
