"""Notebook 04's panel: the explore panel of §5, which plays the simplified model's trials (§4.2) on the fast path
for the delays, trial length and player a student picks."""

from coordkit.delay import charts, fast
from coordkit.delay.model import DelayedDilemma
from coordkit.delay.policies import Persona
from coordkit.seeds import derive_seeds
from coordkit.ui import ExperimentPanel, Slider, controls


def explore_panel(start: dict | None = None) -> ExperimentPanel:
    """Notebook 04, §5 "Explore": both delays, the trial length, the player (the simplified model's p and α, or a
    persona's three traits) and the number of trials; the outcome shares of the last 20 s, then the rasters. The
    model's controls start at its declared defaults, or at ``start``."""
    simplified_only = {"active_when": plays_simplified_model}
    persona_only = {"active_when": plays_persona}
    return ExperimentPanel(
        play,
        [
            *controls(
                DelayedDilemma,
                ["delay_a", "delay_b", "duration_s", "policy_a", "p", "alpha"],
                start=start,
                delay_a={"label": "delay A (s)"},
                delay_b={"label": "delay B (s)"},
                duration_s={"low": 20, "label": "trial length (s)"},  # the 20 s measured … 300 s: ≤ 0.13 s a run
                policy_a={"options": ["simplified", "persona"], "label": "player"},
                p={"low": 0.5, "step": 0.01, **simplified_only},  # exercise 2 asks for p = 0.99
                alpha={"label": "α", **simplified_only},
            ),
            Slider("agreeableness", -1.0, 1.0, step=0.5, default=1.0, label="agreeableness A", **persona_only),
            Slider("conscientiousness", -1.0, 1.0, step=0.5, default=-1.0, label="conscientiousness C", **persona_only),
            Slider("neuroticism", -1.0, 1.0, step=0.5, default=1.0, label="neuroticism N", **persona_only),
            Slider("trials", 50, 500, step=50, default=200),
        ],
        chart=show,
    )


def play(
    delay_a: float,
    delay_b: float,
    duration_s: float,
    policy_a: str,
    p: float,
    alpha: float,
    agreeableness: float,
    conscientiousness: float,
    neuroticism: float,
    trials: int,
) -> tuple[fast.Trials, float, float]:
    """Play `trials` trials on the fast path (seeds derived from 0); a persona plays the simplified model with the
    p and α of :meth:`Persona.parameters`. Returns the trials and the p and α they were played with."""
    if policy_a == "persona":
        p, alpha = Persona(agreeableness, conscientiousness, neuroticism).parameters()
    return fast.simulate(derive_seeds(0, trials), p, alpha, delay_a, delay_b, duration_s), p, alpha


def show(played: tuple[fast.Trials, float, float]) -> list:
    """The outcome shares and the rasters of :func:`coordkit.delay.charts.explore`."""
    return charts.explore(*played)


def plays_simplified_model(values: dict) -> bool:
    """p and α matter only for the simplified model's player: a persona sets its own from its traits."""
    return values["policy_a"] == "simplified"


def plays_persona(values: dict) -> bool:
    """The three traits matter only for a persona player."""
    return values["policy_a"] == "persona"
