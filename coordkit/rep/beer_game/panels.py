"""Notebook 01's panels: the player (section 2) and the explore panel (section 4)."""

from typing import Any

from coordkit.player import ModelPlayer, model_player
from coordkit.rep.beer_game import charts
from coordkit.rep.beer_game.model import BeerGame
from coordkit.ui import ExperimentPanel, model_panel

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


def player_panel(start: dict | None = None, policy: Any = None, model: type[BeerGame] = BeerGame) -> ModelPlayer:
    """One game played round by round (Play, Step, Reset), drawn as the chain stands after each round
    (:func:`~coordkit.rep.beer_game.charts.chain`), with the explore panel's controls. They start at the declared
    defaults, or at ``start``; with ``policy`` (a student's rule), the stages' policy too, started at it.
    ``model`` may be a subclass of BeerGame (a student's): it plays in the same player."""
    return model_player(model, EXPLORED, start=start, policy=policy, **_control_options())


def explore_panel() -> ExperimentPanel:
    """A whole game (:func:`~coordkit.rep.beer_game.charts.game_view`) with every setting section 4 and the
    exercises ask for; a control greys out when the other settings make it irrelevant."""
    return model_panel(BeerGame, EXPLORED, chart=lambda game: charts.game_view(game.frame()), **_control_options())


def _control_options() -> dict[str, dict]:
    """The labels of the controls, and when each is greyed out (for every panel that plays a game)."""
    return {
        "consensus": {"active_when": shares_coordination_variables},
        "rounds": {"label": "rounds (horizon)"},
        "step_round": {"label": "shock round", "active_when": has_a_shock},
        "step_size": {"label": "shock size (cases)"},
        "supply_line_weight": {"label": "supply line weight β", "active_when": follows_sterman},
        "player_spread": {"active_when": follows_sterman},
        "seed": {"active_when": draws_anything},
    }


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
