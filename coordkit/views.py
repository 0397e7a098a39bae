"""State views: what a model looks like *now*, the picture a player (:mod:`coordkit.player`) redraws at every step.

A family declares one view per model in its ``charts.py``::

    @state_view(BeerGame)
    def chain(game: BeerGame) -> alt.LayerChart:
        \"\"\"The chain this round: stock, backlog and the orders in transit between stages.\"\"\"

A view is a function of the model as it stands (after ``model.steps`` steps; a new model is step 0) that returns one
Altair chart of its state, not of its history, drawn in its domain's idiom. The player redraws it in place several
times a second, so a view is held to what a live chart updates in place (CONTRIBUTING.md, ``charts.py``): from one
step to the next its spec changes only in data and titles (fixed size; scale domains, if any, from the model's
parameters, never from the step's data), it names the step in its title, and it is built in a few tens of
milliseconds at the model's default size. The contract tests hold every registered model to this.
"""

from collections.abc import Callable
from typing import Any

from coordkit.families import import_families
from coordkit.model import Model

View = Callable[[Any], Any]  # a model → an Altair chart of its state

_VIEWS: dict[type[Model], View] = {}


def state_view(model: type[Model]) -> Callable[[View], View]:
    """Declare the decorated function as ``model``'s state view."""

    def register(view: View) -> View:
        if model in _VIEWS and _VIEWS[model].__qualname__ != view.__qualname__:
            raise ValueError(f"{model.__name__} already has a state view, {_VIEWS[model].__qualname__}")
        _VIEWS[model] = view
        return view

    return register


def view_of(model: type[Model]) -> View:
    """``model``'s state view, importing the families (their charts declare the views) if it is not known yet."""
    if model not in _VIEWS:
        import_families()
    if model not in _VIEWS:
        raise LookupError(
            f"{model.__name__} declares no state view: add one to its family's charts.py with "
            f"@state_view({model.__name__}) (coordkit/views.py)"
        )
    return _VIEWS[model]


def viewed() -> dict[type[Model], View]:
    """Every model whose state view has been declared so far, with its view."""
    return dict(_VIEWS)
