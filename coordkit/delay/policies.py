"""How players choose C or D each tick: the paper's simplified model, the classic strategies, and personas.

All decide from an :class:`Observation`, the server's state after the previous tick and the recent change points
(§3.2), and never see the opponent's latest choice, which is still in flight.
"""

from dataclasses import dataclass, field

import numpy as np

from coordkit.delay.game import C, D
from coordkit.policies import Classifier, DecisionError, Policy, policy_name


@dataclass(frozen=True)
class Change:
    """A change point of the history: at ``time_s`` (server clock) ``player``'s effective action became ``action``."""

    time_s: float
    player: str
    action: str


@dataclass(frozen=True)
class Observation:
    """What player ``player`` ("A" or "B") knows when it chooses at tick ``tick``: the server at ``time_s`` =
    (tick − 1)·Δt, after the previous tick (§3.2). Never the opponent's latest choice, which is still on its way.

    - ``tick``, ``time_s``: the tick about to be played, and the server's clock (s) when the player looks;
    - ``player``: "A" or "B"; ``own_delay_s``, ``opponent_delay_s``: how long each one's choices take to arrive;
    - ``own_effective``, ``opponent_effective``: the actions in effect on the server, "C", "D" or "?" (none yet);
    - ``own_payoff``, ``opponent_payoff``: the payoffs so far;
    - ``own_last_choice``: the player's own latest choice, which may not have reached the server yet;
    - ``history``: the changes of the effective actions (:class:`Change`) within the memory horizon, oldest first
      (the model's ``memory_s``, 15 s by default: an action in effect for longer has no change left in it).

    A tick is the model's ``tick_s`` (1 s by default).
    """

    tick: int
    time_s: float
    player: str
    own_delay_s: float
    opponent_delay_s: float
    own_effective: str
    opponent_effective: str
    own_payoff: float
    opponent_payoff: float
    own_last_choice: str  # its latest choice, which may not have reached the server yet
    history: tuple[Change, ...] = ()  # effective-action changes within the memory horizon, oldest first


@dataclass(frozen=True)
class Decision:
    """A player's decision at a tick: ``action``, "C" (cooperate) or "D" (defect). A policy may return the plain
    "C" or "D" instead."""

    action: str


def action_of(decision: object, policy: object) -> str:
    """The action ``decision`` stands for; a :class:`~coordkit.policies.DecisionError` that names ``policy``, the
    value it returned and what a player decides, for anything else."""
    action = decision.action if isinstance(decision, Decision) else decision
    if isinstance(action, str) and action in (C, D):
        return action
    hint = (
        f"; did you mean {action.strip().upper()!r}?"
        if isinstance(action, str) and action.strip().upper() in (C, D)
        else ""
    )
    raise DecisionError(
        f"policy {policy_name(policy)!r} returned {decision!r}: a player of the delayed dilemma decides 'C' "
        f"(cooperate) or 'D' (defect), as a string or as Decision('C'){hint}"
    )


@dataclass(frozen=True)
class TitForTat(Policy):
    """Do what the opponent is seen doing; cooperate while nothing is seen yet."""

    name = "tit_for_tat"
    classifier = Classifier()

    def decide(self, observation: Observation) -> str:
        return D if observation.opponent_effective == D else C


@dataclass
class GrimTrigger(Policy):
    """Cooperate until the opponent is first seen defecting, then defect for good."""

    triggered: bool = field(default=False, init=False)  # the opponent was seen defecting

    name = "grim_trigger"
    classifier = Classifier(stateful=True)

    def decide(self, observation: Observation) -> str:
        self.triggered = self.triggered or observation.opponent_effective == D
        return D if self.triggered else C

    def reset(self) -> None:
        self.triggered = False


@dataclass(frozen=True)
class Always(Policy):
    """Always the same action: ``Always(C)`` cooperates, ``Always(D)`` defects."""

    action: str

    classifier = Classifier()

    @property
    def name(self) -> str:
        return "always_cooperate" if self.action == C else "always_defect"

    def decide(self, observation: Observation) -> str:
        return self.action


@dataclass(frozen=True)
class SimplifiedModel(Policy):
    """The paper's simplified agent (§4.2): with probability p tit-for-tat, otherwise defect with probability
    α·D_i (D_i its own delay in seconds, capped at 1) and cooperate else.

    Each decision draws two uniforms from ``rng`` — (u₁, u₂): TFT if u₁ < p, else D if u₂ < α·D_i — so that the
    vectorised fast path (:mod:`coordkit.delay.fast`) can replay exactly the same draws.
    """

    p: float
    alpha: float
    rng: np.random.Generator | None = field(default=None, repr=False, compare=False)  # None: the player's, in a model

    name = "simplified"
    classifier = Classifier(stochastic=True)

    def decide(self, observation: Observation) -> str:
        follow, defect = self.rng.random(2)
        if follow < self.p:
            return TitForTat().decide(observation)
        return D if defect < min(1.0, self.alpha * observation.own_delay_s) else C


@dataclass(frozen=True)
class Persona:
    """Big Five traits in [−1, 1] that the paper gives its LLM agents (§3.2); the experiments use A=1, C=−1, N=1."""

    agreeableness: float = 1.0
    conscientiousness: float = -1.0
    neuroticism: float = 1.0

    def __post_init__(self):
        for trait, value in self.__dict__.items():
            if not -1 <= value <= 1:  # NaN fails too
                raise ValueError(f"{trait}={value} must be in [-1, 1]")

    def text(self) -> str:
        """A persona description for the system prompt. The authors had an LLM write ~100 words from the traits;
        the kit writes it from a template so that it is the same every time."""
        return " ".join(
            f"Your {trait} is {_level(value)}: {phrases[value >= 0]}"
            for trait, value, phrases in (
                ("agreeableness", self.agreeableness, _AGREEABLE),
                ("conscientiousness", self.conscientiousness, _CONSCIENTIOUS),
                ("neuroticism", self.neuroticism, _NEUROTIC),
            )
        )

    def parameters(self) -> tuple[float, float]:
        """The simplified model's (p, α) for this persona — the kit's assumption, not the paper's: agreeable
        players follow tit-for-tat more (p = 0.6 … 0.9); neurotic and careless ones are more tempted by delay
        (α = 0.05 … 0.15). The paper's persona (A=1, C=−1, N=1) gives p = 0.9, α = 0.15."""
        p = 0.6 + 0.15 * (self.agreeableness + 1)
        alpha = 0.05 + 0.025 * (self.neuroticism + 1) + 0.025 * (1 - self.conscientiousness)
        return round(p, 6), round(alpha, 6)

    def rule(self, rng: np.random.Generator) -> SimplifiedModel:
        """The kit's rule-based stand-in for this persona: the simplified model with :meth:`parameters`."""
        return SimplifiedModel(*self.parameters(), rng)


_AGREEABLE = (
    "you put your own interest first and distrust others' motives.",
    "you trust others, like to get along and forgive quickly.",
)
_CONSCIENTIOUS = ("you act on impulse and do not stick to plans.", "you are disciplined, careful and consistent.")
_NEUROTIC = ("you stay calm under pressure.", "you worry easily and react strongly to setbacks and slights.")


def _level(value: float) -> str:
    if value == 0:
        return "average"
    strength = "very" if abs(value) >= 0.5 else "somewhat"
    return f"{strength} {'high' if value > 0 else 'low'}"
