"""coordkit: Mesa models, widgets and notebooks for learning how groups of AI agents coordinate.

Five papers, one family (a package) each, with its notebook and the figures ``coordkit reproduce ID`` regenerates
(REP is the Ripple Effect Protocol):

paper (short title)          package                 notebook                       figure ids
---------------------------  ----------------------  -----------------------------  ------------------------
REP §5: the Beer Game        coordkit.rep.beer_game  01_rep_beer_game.ipynb         rep-beer-fig1
REP §6: Fishbanks            coordkit.rep.fishbanks  02_rep_fishbanks_movies.ipynb  rep-fishbanks-fig2
REP §7: movie scheduling     coordkit.rep.movies     02_rep_fishbanks_movies.ipynb  rep-movies-fig3-scaling
                                                                                    rep-movies-fig3-sparsity
                                                                                    rep-movies-readings
Pressure fields and decay    coordkit.pressure       03_pressure_fields.ipynb       pressure-table2
                                                                                    pressure-table5
                                                                                    pressure-table6
                                                                                    pressure-table7
                                                                                    pressure-ablation
                                                                                    pressure-calibrated
Delay and cooperation        coordkit.delay          04_delay_dilemma.ipynb         delay-fig3
                                                                                    delay-fig4
                                                                                    delay-asymmetry
Ahoy: BSPL protocols, LLMs   coordkit.ahoy           05_bspl_ahoy.ipynb             ahoy-scenarios
                             coordkit.bspl
Agora meta protocol          coordkit.agora          06_agora.ipynb                 agora-weather
                                                                                    agora-network

Every model is here at the top, loaded when first named (so ``import coordkit`` stays fast)::

    from coordkit import BeerGame, sweep

    game = BeerGame(protocol="a2a", rng=0).run()  # help(BeerGame): every parameter, its range, default and unit
    game.frame()                                  # one row per round and stage
    sweep(BeerGame, {"protocol": ["a2a", "rep_textual"]}, seeds=10)  # one row per run

The models: BeerGame, Fishbanks, MovieScheduling, PressureField, DelayedDilemma, AhoyEnactment, EnactmentModel
(Kiko, under Ahoy), WeatherDemo and AgoraNetwork; ``models()`` gives each by its ``coordkit run`` id, and
``figures`` is the registry of the papers' figures (``figures.get("rep-beer-fig1").compute(5, 0)``).
"""

import sys
import types

from coordkit import iri_grammar

iri_grammar.defer()  # before anything imports Altair

__version__ = "0.1.0"

_PUBLIC = {
    "BeerGame": "coordkit.rep.beer_game:BeerGame",
    "Fishbanks": "coordkit.rep.fishbanks:Fishbanks",
    "MovieScheduling": "coordkit.rep.movies:MovieScheduling",
    "PressureField": "coordkit.pressure:PressureField",
    "DelayedDilemma": "coordkit.delay:DelayedDilemma",
    "AhoyEnactment": "coordkit.ahoy:AhoyEnactment",
    "EnactmentModel": "coordkit.bspl.kiko:EnactmentModel",
    "WeatherDemo": "coordkit.agora:WeatherDemo",
    "AgoraNetwork": "coordkit.agora:AgoraNetwork",
    "sweep": "coordkit.sweeps:sweep",
    "SweepError": "coordkit.sweeps:SweepError",
    "policy_from": "coordkit.policies:policy_from",
    "register_policy": "coordkit.policy_registry:register_policy",
    "check_policy": "coordkit.policy_checks:check_policy",
    "tournament": "coordkit.tournament:tournament",
    "models": "coordkit.model:models",
    "figures": "coordkit.figures",
}
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    """A public name, imported on first use (PEP 562): a model imports Mesa, and its family, only when asked for."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'coordkit' has no attribute {name!r}")
    from pkgutil import resolve_name

    value = globals()[name] = resolve_name(_PUBLIC[name])
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """coordkit itself, keeping ``coordkit.sweep`` the function while the deprecated module of the same name (now
    :mod:`coordkit.sweeps`) lasts: importing it would otherwise replace the function with the module (the import
    system sets a package's attribute to its module). It goes with that module in the next release."""

    def __setattr__(self, name: str, value) -> None:
        if not (name == "sweep" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
