"""The continuous prisoner's dilemma with communication delay as a Mesa model: one trial of two players (§3).

Each step is a tick t = 1, 2, … of Δt seconds (the server clock runs from (t − 1)·Δt to t·Δt):

1. each player observes the server after tick t − 1: both effective actions, both cumulative payoffs, and the
   change points of the last ``memory_s`` seconds;
2. each chooses C or D (a change it makes reaches the server ``delay`` seconds later);
3. the server's effective actions for tick t are the choices made ``delay`` ticks ago (Unknown before then);
4. each player earns its payoff on the effective actions.
"""

import math

import mesa
import numpy as np
import pandas as pd

from coordkit.contests import Pairs
from coordkit.delay import metrics
from coordkit.delay.agents import Player
from coordkit.delay.game import TABLE_1, C, D, Payoffs, Timing, outcome
from coordkit.delay.llm_policies import llm_policy
from coordkit.delay.policies import Always, Change, GrimTrigger, Persona, SimplifiedModel, TitForTat, action_of
from coordkit.llm import LLMClient
from coordkit.model import Model
from coordkit.parameters import Instance, ParameterError, Parameters, PolicyChoice, Real
from coordkit.policies import Policy, decision_round
from coordkit.policy_registry import fresh_policy

POLICIES = ("simplified", "tit_for_tat", "grim_trigger", "always_cooperate", "always_defect", "persona", "llm")
POLICY_NAMES = {
    "simplified": "simplified model (p, α)",
    "tit_for_tat": "tit-for-tat",
    "grim_trigger": "grim trigger",
    "always_cooperate": "always cooperate",
    "always_defect": "always defect",
    "persona": "persona (A, C, N)",
    "llm": "LLM with the persona",
}
MAX_TICKS = 20_000  # a longer trial is a slip of the tick length, not an experiment


def _delays_in_whole_ticks(p: dict) -> None:
    for name in ("delay_a", "delay_b"):
        delay = p[name]
        if delay is not None and not math.isclose(delay / p["tick_s"], round(delay / p["tick_s"]), abs_tol=1e-9):
            raise ParameterError(
                f"{name}={delay} s is not a whole number of ticks (tick_s={p['tick_s']} s): "
                f"round it to a multiple of tick_s"
            )


def _plays_at_least_one_tick(p: dict) -> None:
    if p["duration_s"] < p["tick_s"]:
        raise ParameterError(
            f"duration_s={p['duration_s']} is shorter than one tick (tick_s={p['tick_s']}): play at least one tick"
        )


def _trial_within_max_ticks(p: dict) -> None:
    delays = [d for d in (p["delay_a"], p["delay_b"]) if d is not None]
    ticks = (p["duration_s"] + max(delays)) / p["tick_s"]
    if ticks > MAX_TICKS:
        shown = f"{ticks:,.0f}" if ticks < 1e12 else f"{ticks:.3g}"  # a subnormal tick: not 300 digits
        raise ParameterError(
            f"duration_s={p['duration_s']} plus the longer delay ({max(delays)} s) at "
            f"tick_s={p['tick_s']} is {shown} ticks, above the {MAX_TICKS:,} a trial may last: "
            "use longer ticks or a shorter trial"
        )


def _llm_players_need_a_client(p: dict) -> None:
    if p["llm"] is None and "llm" in (p["policy_a"], p["policy_b"]):
        raise ParameterError("an 'llm' player needs llm=<an LLMClient> (see coordkit.llm.session.open_llm)")


class DelayedDilemma(Model):
    """One trial of the continuous prisoner's dilemma with communication delay: ``duration_s`` seconds of effective
    play, plus the longer delay so that the first choices can arrive (the authors run 60 + D ticks).

    "simplified" players are the paper's simplified model (§4.2) with ``p`` and ``alpha``; "persona" players the
    kit's rule-based stand-in for a persona (:meth:`Persona.rule`); "llm" players ask ``llm`` with the persona as
    their system prompt, and an unusable reply falls back to the persona's rule, counted in ``llm_fallbacks``.

    A player may play a student's rule instead (issue 45): a function of an
    :class:`~coordkit.delay.policies.Observation` that returns "C" or "D", a Policy, or a name given to
    :func:`coordkit.register_policy`. The rule makes the whole of the player's choice; the delays, the server and
    the payoffs stay the game's.
    """

    parameters = Parameters(
        Real(
            "delay_a",
            0.0,
            0,
            600,
            doc="player A's communication delay (the paper: 0 to 20 s, equal for both)",
            unit="s",
            step=1,
            slider=(0, 30),
        ),
        Real(
            "delay_b",
            None,
            0,
            600,
            optional="B's delay is A's",
            doc="player B's communication delay",
            unit="s",
            step=1,
            slider=(0, 30),
        ),
        PolicyChoice("policy_a", "simplified", POLICIES, labels=POLICY_NAMES, doc="how player A chooses"),
        PolicyChoice(
            "policy_b",
            None,
            POLICIES,
            labels={**POLICY_NAMES, None: "like player A"},
            optional="B plays like A",
            doc="how player B chooses",
        ),
        Real("p", 0.9, 0, 1, doc="the simplified model's probability of playing tit-for-tat (the paper: 0.8, 0.9)"),
        Real(
            "alpha",
            0.1,
            0,
            1,
            step=0.01,
            slider=(0, 0.3),
            unit="1/s",
            doc="the simplified model's defection incentive per second of own delay (the paper: 0.1, 0.2)",
        ),
        Instance("persona_a", Persona(), Persona, doc="player A's Big Five traits (the paper: A=1, C=−1, N=1)"),
        Instance("persona_b", None, Persona, optional="B's persona is A's", doc="player B's Big Five traits"),
        Instance("payoffs", TABLE_1, Payoffs, doc="the payoffs per tick T, R, P, S (Table 1: 5, 3, 1, 0)"),
        Real(
            "duration_s",
            60.0,
            0,
            3600,
            low_open=True,
            unit="s",
            step=10,
            slider=(10, 300),
            doc="effective play time (the paper: 60 s)",
        ),
        Real(
            "tick_s",
            1.0,
            0,
            60,
            low_open=True,
            unit="s",
            step=0.5,
            slider=(0.5, 5),
            doc="the tick Δt: players choose once a tick (the paper: 1 s)",
        ),
        Real(
            "memory_s",
            15.0,
            0,
            3600,
            low_open=True,
            unit="s",
            step=1,
            slider=(1, 60),
            doc="the memory horizon t_m: how far back players see the change points (the paper: 15 s)",
        ),
        Instance("llm", None, LLMClient, optional="no LLM players", doc="the LLM client that 'llm' players ask"),
        relations=(
            _delays_in_whole_ticks,
            _plays_at_least_one_tick,
            _trial_within_max_ticks,
            _llm_players_need_a_client,
        ),
    )

    contest = Pairs(
        "policy_a",
        "policy_b",
        score=lambda trial, side: trial.players[side].payoff / trial.timing.ticks(trial.duration_s),
        measure="payoff per tick of play",
        sparring=("tit_for_tat", "always_defect", "simplified"),
    )

    random_streams = {
        # player i's own (A: 0, B: 1), two uniforms a decision (SimplifiedModel) whatever p, alpha or the delays; the
        # fast path (coordkit.delay.fast) draws the same
        "player": (),
    }

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        delay_b = self.delay_a if self.delay_b is None else self.delay_b
        self.timing = Timing(self.delay_a, delay_b, self.duration_s, self.tick_s, self.memory_s)
        self.changes: list[Change] = []
        kinds = (self.policy_a, self.policy_b or self.policy_a)
        personas = (self.persona_a, self.persona_b or self.persona_a)
        self.players = [
            Player(self, name, delay, self._policy(kind, persona, self.streams("player", index)))
            for index, (name, delay, kind, persona) in enumerate(zip("AB", self.timing.delays, kinds, personas))
        ]
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "steps",
                "time_s": lambda m: m.steps * m.tick_s,
                "choice_a": lambda m: m.players[0].last_choice,
                "choice_b": lambda m: m.players[1].last_choice,
                "effective_a": lambda m: m.players[0].effective(m.steps),
                "effective_b": lambda m: m.players[1].effective(m.steps),
                "outcome": lambda m: outcome(m.players[0].effective(m.steps), m.players[1].effective(m.steps)),
                "payoff_a": lambda m: m.players[0].payoff,
                "payoff_b": lambda m: m.players[1].payoff,
            }
        )
        self.datacollector.collect(self)

    def _policy(self, kind, persona: Persona, rng: np.random.Generator) -> Policy:
        """A player's policy: a rule of the paper's or the kit's by name (``rng`` is the player's own stream), or a
        student's (a registered name, a Policy or a function: :func:`~coordkit.policy_registry.fresh_policy`)."""
        if not (isinstance(kind, str) and kind in POLICIES):
            return fresh_policy(kind, type(self), rng)
        rules = {
            "simplified": lambda: SimplifiedModel(self.p, self.alpha, rng),
            "tit_for_tat": TitForTat,
            "grim_trigger": GrimTrigger,
            "always_cooperate": lambda: Always(C),
            "always_defect": lambda: Always(D),
            "persona": lambda: persona.rule(rng),
            "llm": lambda: llm_policy(self.llm, persona.rule(rng), persona, self.payoffs, self.timing),
        }
        return rules[kind]()

    def step(self) -> None:
        a, b = self.players
        choices = decision_round(
            "decide", [a.policy, b.policy], [a.observe(b), b.observe(a)], concurrent=self.llm is not None
        )
        choices = [action_of(choice, player.policy) for player, choice in zip(self.players, choices)]
        tick = self.steps
        for player, choice in zip(self.players, choices):
            before = player.effective(tick - 1)
            player.choices.append(choice)
            if player.effective(tick) != before:
                self.changes.append(Change((tick - 1) * self.tick_s, player.name, player.effective(tick)))
        effective = a.effective(tick), b.effective(tick)
        a.payoff += self.payoffs.of(*effective)
        b.payoff += self.payoffs.of(*reversed(effective))
        self.datacollector.collect(self)
        self.running = self.steps < self.timing.total_ticks

    def policies(self) -> list[Policy]:
        return [player.policy for player in self.players]

    def frame(self) -> pd.DataFrame:
        """One row per tick; row 0 is the initial state (nothing on the server, "?" everywhere, no payoffs).

        Columns: tick; time_s (the server clock at the end of the tick, tick·Δt); choice_a, choice_b (the choice
        made at this tick); effective_a, effective_b (the actions in effect on the server during the tick, "?"
        before the first choice arrives); outcome ("CC", "DD", "CD": A exploited, "DC": B exploited, or "?");
        payoff_a, payoff_b (cumulative).
        """
        return self.datacollector.get_model_vars_dataframe().reset_index(drop=True)

    def summary(self) -> dict:
        """The shares of each outcome over the last 20 s (:func:`metrics.shares`), both payoffs, and LLM use."""
        codes = metrics.effective_codes(self.frame())
        shares = metrics.shares(codes, self.timing).iloc[0].to_dict()
        a, b = self.players
        return shares | {
            "payoff_a": a.payoff,
            "payoff_b": b.payoff,
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }
