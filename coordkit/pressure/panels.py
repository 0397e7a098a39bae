"""The notebook's panels (notebook 03): one trial replayed tick by tick (§2), and every parameter to explore (§8).

``tick_panel()`` and ``explore_panel()`` each return a :class:`coordkit.ui.ExperimentPanel`; the functions below
play the trials, and the conditions say which controls a setting ignores (those are greyed out).
"""

from functools import lru_cache
from typing import Any

import pandas as pd

from coordkit.pressure import charts
from coordkit.pressure.model import PressureField
from coordkit.ui import ExperimentPanel, Slider, Toggle, controls

# --- §2 · one trial, tick by tick ----------------------------------------------------------------------------------

ROW_STATE = ["pressure", "attention", "fitness", "confidence", "inhibited", "focus", "patched"]


def tick_panel() -> ExperimentPanel:
    """Notebook 03, §2 "Watching the algorithm": a trial's square and its rows' state after the chosen tick, with
    decay on or off (§3) and another seed to pick."""
    return ExperimentPanel(
        at_tick,
        [
            Slider("seed", 0, 19, default=0),
            Toggle("decay", default=True),
            Slider("tick", 0, 30, default=2),
        ],
    )


@lru_cache(maxsize=64)
def replay(seed: int, decay: bool) -> PressureField:
    """The paper-mode pressure-field trial with this seed, played to its end once (the tick slider only reads it)."""
    return PressureField(decay=decay, rng=seed).run()


def at_tick(seed: int, decay: bool, tick: int) -> list[Any]:
    """The square after ``tick`` (the trial's last tick if it ended sooner), coloured on one scale for the whole
    trial, and a table of every row's state then."""
    model = replay(seed, decay)
    tick = min(tick, model.steps)
    state = rows_at(model, tick)
    title = f"seed {seed}, tick {tick} of {model.steps}: total pressure {state['pressure'].sum()}"
    return [charts.square_at(model, tick, title=title), state[ROW_STATE].round(2)]


def rows_at(model: PressureField, tick: int) -> pd.DataFrame:
    """Each row's state after ``tick`` (:meth:`PressureField.rows_frame`), with its ``attention`` P_i (1 - f_i): what
    it would bid for the focus if nothing decayed (the next tick decays f first)."""
    rows = model.rows_frame()
    state = rows[rows["tick"] == tick].set_index("row")
    return state.assign(attention=state["pressure"] * (1 - state["fitness"]))


# --- §8 · explore --------------------------------------------------------------------------------------------------

EXPLORED = [
    "strategy", "mode", "decay_rate", "inhibition_ticks", "acceptance_gate", "escalation", "examples",
    "agent_count", "n", "empty", "skill", "failure", "max_ticks",
]  # fmt: skip


def explore_panel() -> ExperimentPanel:
    """Notebook 03, §8 "Explore": one trial with every parameter on a control, and a seed; the total pressure over
    the ticks, the final square and each row's fitness (:func:`charts.trial`)."""
    return ExperimentPanel(
        play,
        [
            *controls(
                PressureField,
                EXPLORED,
                decay_rate={"label": "decay rate λ", "active_when": feels_decay},
                inhibition_ticks={"active_when": inhibits},
                acceptance_gate={"label": "acceptance gate", "default": False, "active_when": paper_mode},
                examples={"active_when": shows_examples},
                agent_count={"high": 32, "active_when": many_actors},
                empty={"label": "empty cells"},
                failure={"label": "failure (unusable proposals)", "step": 0.01},
                max_ticks={"step": 10},
            ),
            Slider("seed", 0, 99, default=0),  # the model's rng, not a parameter
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
