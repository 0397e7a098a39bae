"""Notebook 01's panels: the round stepper (section 2) and the explore panel (section 4)."""

import ipywidgets as widgets

from coordkit.rep.beer_game import charts
from coordkit.rep.beer_game.model import PROTOCOLS, BeerGame
from coordkit.ui import ExperimentPanel, Slider, controls, model_panel

EXPLORED = [
    "protocol",
    "consensus",
    "stages",
    "rounds",
    "step_round",
    "step_size",
    "demand_noise",
    "order_delay",
    "shipping_delay",
    "supply_line_weight",
    "player_spread",
]
STEP_MS = 1500  # the stepper's ▶ moves one round every 1.5 s


def stepper_panel(seed: int = 0, at_round: int = 7, start: dict | None = None) -> ExperimentPanel:
    """The chain at round t (:func:`~coordkit.rep.beer_game.charts.chain_at`) of one default game per protocol,
    played with ``seed``, from round ``at_round``, and a ▶ button above the controls that steps t forward. The
    protocol starts at the declared default, or at ``start["protocol"]``."""
    played = {protocol: BeerGame(protocol=protocol, rng=seed).run().frame() for protocol in PROTOCOLS}
    last = int(played["a2a"]["round"].max())
    panel = ExperimentPanel(
        lambda protocol, t: charts.chain_at(played[protocol], t),
        [
            *controls(BeerGame, ["protocol"], start=start),
            Slider("t", 0, last, default=at_round, label="round"),
        ],
    )
    play = widgets.Play(value=at_round, min=0, max=last, interval=STEP_MS)
    widgets.jslink((play, "value"), (panel.controls["t"], "value"))  # in the page: ▶ moves the round slider
    panel.widget.children = (play, *panel.widget.children)
    return panel


def explore_panel() -> ExperimentPanel:
    """A whole game (:func:`~coordkit.rep.beer_game.charts.game_view`) with every setting section 4 and the
    exercises ask for; a control greys out when the other settings make it irrelevant."""
    return model_panel(
        BeerGame,
        EXPLORED,
        chart=lambda game: charts.game_view(game.frame()),
        consensus={"active_when": shares_coordination_variables},
        rounds={"label": "rounds (horizon)"},
        step_round={"label": "shock round", "active_when": has_a_shock},
        step_size={"label": "shock size (cases)"},
        supply_line_weight={"label": "supply line weight β", "active_when": follows_sterman},
        player_spread={"active_when": follows_sterman},
        seed={"active_when": draws_anything},
    )


def shares_coordination_variables(values: dict) -> bool:
    """Consensus takes the median of the players' coordination variables, which only REP players have (§3.2)."""
    return values["protocol"] in ("rep_numerical", "rep_textual")


def has_a_shock(values: dict) -> bool:
    """The shock round means nothing when the shock size is 0."""
    return values["step_size"] != 0


def follows_sterman(values: dict) -> bool:
    """Base-stock players count their whole supply line and do not differ, so β and the spread leave them alone."""
    return values["protocol"] != "base_stock"


def draws_anything(values: dict) -> bool:
    """The seed draws the players' spread and the demand noise; base-stock players without noise draw nothing."""
    return follows_sterman(values) or values["demand_noise"] > 0
