"""Notebook 02's Fishbanks panels: one game played season by season (section 1.1), and one game played again at
every change of its controls (section 1.5)."""

from typing import Any

from coordkit.player import ModelPlayer, model_player
from coordkit.rep.fishbanks import charts
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.ui import ExperimentPanel, model_panel

EXPLORED = ["protocol", "companies", "seasons", "regeneration", "fish_price", "boat_cost"]


def fishery_player_panel(
    start: dict | None = None, policy: Any = None, model: type[Fishbanks] = Fishbanks
) -> ModelPlayer:
    """One game played season by season (▶ Play, Step, Reset) in its state view,
    :func:`~coordkit.rep.fishbanks.charts.fishery_now`: the sea's stock, this season's catch and regrowth, and
    each company's boats; the controls are :func:`explore_panel`'s, at the declared defaults or at ``start``; with
    ``policy`` (a student's rule), the companies' policy too, started at it. ``model`` may be a subclass of
    Fishbanks (a student's): it plays in the same player."""
    return model_player(model, EXPLORED, start=start, policy=policy)


def explore_panel(start: dict | None = None) -> ExperimentPanel:
    """A whole game (:func:`~coordkit.rep.fishbanks.charts.season_view`: the stock and each company's boats) with
    the settings section 1.5 asks about, at the declared defaults or at ``start``."""
    return model_panel(Fishbanks, EXPLORED, chart=charts.season_view, start=start)
