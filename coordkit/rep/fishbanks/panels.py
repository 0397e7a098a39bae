"""Notebook 02's Fishbanks panel (section 1.5): one game played again at every change of its controls."""

from coordkit.rep.fishbanks import charts
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.ui import ExperimentPanel, model_panel

EXPLORED = ["protocol", "companies", "seasons", "regeneration", "fish_price", "boat_cost"]


def explore_panel(start: dict | None = None) -> ExperimentPanel:
    """A whole game (:func:`~coordkit.rep.fishbanks.charts.season_view`: the stock and each company's boats) with
    the settings section 1.5 asks about, at the declared defaults or at ``start``."""
    return model_panel(Fishbanks, EXPLORED, chart=charts.season_view, start=start)
