"""The notebook's panels (notebook 03): one trial played tick by tick (§2), and every parameter to explore (§8).

``player_panel()`` returns a :class:`coordkit.player.ModelPlayer`, ``explore_panel()`` a
:class:`coordkit.ui.ExperimentPanel`; the functions below play the explored trials, and the conditions say which
controls a setting ignores (those are greyed out). Both panels label and condition their controls alike
(:func:`overrides`).
"""

from typing import Any

from coordkit.player import ModelPlayer, model_player
from coordkit.pressure import charts
from coordkit.pressure.model import PressureField
from coordkit.ui import ExperimentPanel, SliderControl, controls

# --- §2 · one trial, tick by tick ----------------------------------------------------------------------------------

PLAYED = ["strategy", "mode", "decay", "inhibition_ticks", "agent_count", "n", "empty", "skill"]


def player_panel(start: dict | None = None) -> ModelPlayer:
    """Notebook 03, §2 "Watching the algorithm": one trial played tick by tick in its state view
    (:func:`charts.field_now`: the square, each cell's share of pressure, the rows the actors work on, each row's
    fitness and state), with the strategy, decay and the puzzle's size on controls; seed 0 is the trial §2 traces."""
    return model_player(PressureField, PLAYED, start=start, **overrides(PLAYED))


# --- §8 · explore --------------------------------------------------------------------------------------------------

EXPLORED = [
    "strategy", "mode", "counting", "decay_rate", "inhibition_ticks", "acceptance_gate", "escalation", "examples",
    "agent_count", "n", "empty", "skill", "failure", "max_ticks",
]  # fmt: skip


def explore_panel() -> ExperimentPanel:
    """Notebook 03, §8 "Explore": one trial with every parameter on a control, and a seed; the total pressure over
    the ticks, the final square and each row's fitness (:func:`charts.trial`)."""
    return ExperimentPanel(
        play,
        [
            *controls(PressureField, EXPLORED, **overrides(EXPLORED)),
            SliderControl("seed", 0, 99, default=0),  # the model's rng, not a parameter
        ],
        chart=charts.trial,
    )


def play(seed: int, decay_rate: float, inhibition_ticks: int, acceptance_gate: bool, **values: Any) -> PressureField:
    """One trial played to its end. One slider sets both decay rates (§3, eq. 4), and a decay rate or an inhibition
    of 0 switches that mechanism off; in published mode the gate follows the code's decay switch (§6), so the
    toggle is left out."""
    return PressureField(
        decay=decay_rate > 0,
        decay_rate=decay_rate,
        confidence_decay_rate=decay_rate,
        inhibition=inhibition_ticks > 0,
        inhibition_ticks=inhibition_ticks,
        acceptance_gate=acceptance_gate if values["mode"] == "paper" else None,
        **values,
        rng=seed,
    ).run()


def overrides(names: list[str]) -> dict[str, dict]:
    """The labels, spans and conditions of the controls ``names``, as both panels show them."""
    every = {
        "decay": {"active_when": feels_decay},
        "decay_rate": {"label": "decay rate λ", "active_when": feels_decay},
        "inhibition_ticks": {"active_when": inhibits},
        "acceptance_gate": {"label": "acceptance gate", "default": False, "active_when": paper_mode},
        "examples": {"active_when": shows_examples},
        "agent_count": {"high": 32, "active_when": many_actors},
        "empty": {"label": "empty cells"},
        "failure": {"label": "failure (unusable proposals)", "step": 0.01},
        "max_ticks": {"step": 10},
    }
    return {name: every[name] for name in names if name in every}


def paper_mode(values: dict[str, Any]) -> bool:
    """The acceptance gate is a choice only in paper mode: the published code's gate follows its decay switch."""
    return values["mode"] == "paper"


def feels_decay(values: dict[str, Any]) -> bool:
    """Decay matters only where something decays: in paper mode only pressure-field keeps fitness; in the published
    code the decay switch turns the acceptance gate on."""
    return values["strategy"] == "pressure_field" or values["mode"] == "published"


def inhibits(values: dict[str, Any]) -> bool:
    """Inhibition is pressure-field's, in paper mode; the published code has none."""
    return paper_mode(values) and values["strategy"] == "pressure_field"


def many_actors(values: dict[str, Any]) -> bool:
    """The agent count matters only where each agent proposes: sequential plays one actor, the conversation's
    Proposer proposes instead, and the published code asks min(8, 2 × holes) proposals whatever the count."""
    return paper_mode(values) and values["strategy"] in ("pressure_field", "hierarchical", "random")


def shows_examples(values: dict[str, Any]) -> bool:
    """Few-shot examples go to the actors; the conversation's Proposer is not shown them."""
    return values["strategy"] != "conversation"
