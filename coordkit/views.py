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

StateView = Callable[[Any], Any]  # a model → an Altair chart of its state

_VIEWS: dict[type[Model], StateView] = {}


def state_view(model: type[Model]) -> Callable[[StateView], StateView]:
    """Declare the decorated function as ``model``'s state view."""

    def register(view: StateView) -> StateView:
        if model in _VIEWS and _VIEWS[model].__qualname__ != view.__qualname__:
            raise ValueError(f"{model.__name__} already has a state view, {_VIEWS[model].__qualname__}")
        _VIEWS[model] = view
        return view

    return register


def view_of(model: type[Model]) -> StateView:
    """``model``'s state view, or its nearest base's (a subclass shows what its model shows), importing the families
    (their charts declare the views) if none is known yet."""
    view = _declared(model)
    if view is None:
        import_families()
        view = _declared(model)
    if view is None:
        raise LookupError(
            f"{model.__name__} declares no state view: declare one with @state_view({model.__name__}) above a "
            "function of the model that returns its chart (coordkit/views.py)"
        )
    return view


def _declared(model: type[Model]) -> StateView | None:
    return next((_VIEWS[cls] for cls in model.__mro__ if cls in _VIEWS), None)


def viewed() -> dict[type[Model], StateView]:
    """Every model whose state view has been declared so far, with its view."""
    return dict(_VIEWS)
