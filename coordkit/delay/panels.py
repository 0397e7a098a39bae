"""Notebook 04's panels: the player of §2, which plays one trial second by second, and the explore panel of §5,
which plays the simplified model's trials (§4.2) on the fast path for the delays, trial length and player a student
picks. Both label and condition their controls alike (:func:`overrides`)."""

from functools import cache
from typing import Any

from coordkit.delay import charts, fast
from coordkit.delay.model import POLICIES, DelayedDilemma
from coordkit.delay.policies import Persona
from coordkit.player import ModelPlayer, model_player
from coordkit.seeds import derive_seeds
from coordkit.ui import ExperimentPanel, SliderControl, controls

PLAYED = ["delay_a", "delay_b", "policy_a", "policy_b", "p", "alpha", "duration_s"]
RULES = [policy for policy in POLICIES if policy != "llm"]  # the players that need no LLM client


def player_panel(
    start: dict | None = None, policy: Any = None, model: type[DelayedDilemma] = DelayedDilemma
) -> ModelPlayer:
    """Notebook 04, §2 "Watch one run": one trial played second by second in its state view
    (:func:`charts.trial_now`: both players' choices, what of them the other sees, the outcome, and each change of
    action on its way), with both delays, both players (any rule) and the trial length on controls. The controls
    start at the model's declared defaults, or at ``start``; ``policy`` (a student's rule) starts player A at it.
    ``model`` may be a subclass of DelayedDilemma (a student's): it plays in the same player."""
    players = {"policy_a": {"options": RULES, "label": "player A"}, "policy_b": {"options": RULES, "label": "player B"}}
    seed = {"active_when": draws_at_random}
    return model_player(model, PLAYED, start=start, policy=policy, **overrides(PLAYED), **players, seed=seed)


def explore_panel(start: dict | None = None) -> ExperimentPanel:
    """Notebook 04, §5 "Explore": both delays, the trial length, the player (the simplified model's p and α, or a
    persona's three traits) and the number of trials; the outcome shares of the last 20 s, then the rasters. The
    model's controls start at its declared defaults, or at ``start``."""
    explored = ["delay_a", "delay_b", "duration_s", "policy_a", "p", "alpha"]
    persona_only = {"active_when": plays_persona}
    return ExperimentPanel(
        play,
        [
            *controls(
                DelayedDilemma,
                explored,
                start=start,
                **overrides(explored),
                policy_a={"options": ["simplified", "persona"], "label": "player"},
            ),
            SliderControl("agreeableness", -1.0, 1.0, step=0.5, default=1.0, label="agreeableness A", **persona_only),
            SliderControl(
                "conscientiousness", -1.0, 1.0, step=0.5, default=-1.0, label="conscientiousness C", **persona_only
            ),
            SliderControl("neuroticism", -1.0, 1.0, step=0.5, default=1.0, label="neuroticism N", **persona_only),
            SliderControl("trials", 50, 500, step=50, default=200),
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
    return fast.simulate(trial_seeds(trials), p, alpha, delay_a, delay_b, duration_s), p, alpha


@cache
def trial_seeds(trials: int) -> tuple[int, ...]:
    """The explore panel's seeds: ``trials`` seeds derived from 0, the same at every change of the controls."""
    return tuple(derive_seeds(0, trials))


def show(played: tuple[fast.Trials, float, float]) -> list:
    """The outcome shares and the rasters of :func:`coordkit.delay.charts.explore`."""
    return charts.explore(*played)


def overrides(names: list[str]) -> dict[str, dict]:
    """The labels, spans and conditions of the controls ``names`` that both panels show alike."""
    every = {
        "delay_a": {"label": "delay A (s)"},
        "delay_b": {"label": "delay B (s)"},
        "duration_s": {"low": 20, "label": "trial length (s)"},  # the 20 s measured … 300 s: ≤ 0.13 s a run
        "p": {"low": 0.5, "step": 0.01, "active_when": plays_simplified_model},  # exercise 2 asks for p = 0.99
        "alpha": {"label": "α", "active_when": plays_simplified_model},
    }
    return {name: every[name] for name in names if name in every}


def plays_simplified_model(values: dict) -> bool:
    """p and α matter only for a player of the simplified model: a persona sets its own from its traits, and the
    classic strategies have none."""
    return "simplified" in (values["policy_a"], values.get("policy_b"))


def draws_at_random(values: dict) -> bool:
    """The seed matters only to a player that draws random numbers: the simplified model and the persona's rule."""
    return bool({"simplified", "persona"} & {values["policy_a"], values["policy_b"]})


def plays_persona(values: dict) -> bool:
    """The three traits matter only for a persona player."""
    return values["policy_a"] == "persona"
