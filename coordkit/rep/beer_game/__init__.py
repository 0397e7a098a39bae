"""The Beer Game played by A2A, REP and base-stock players (REP paper §5, Figure 1)."""

from coordkit.rep.beer_game.model import PROTOCOLS, BeerGame

__all__ = ["PROTOCOLS", "BeerGame"]
