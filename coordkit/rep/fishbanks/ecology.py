"""The classic Fishbanks stock model (Meadows' FishBanks, Ltd.; Sterman & King 2017, MIT Sloan's version).

One fishing ground with a maximum stock (``capacity``, 4,000 fish in the classic game). Both of its laws are lookup
tables over the fish density (stock / capacity) at 0, 0.1, …, 1.0, read by linear interpolation:

- net regeneration per season: 0, 58, 132, 212, 339, 517, 582, 517, 240, 74, 0 fish at a capacity of 4,000 —
  hump-shaped, largest (582) at 60% density; scaled by capacity / 4,000 and by a ``regeneration`` multiplier;
- catch per boat per season: ``catch_per_boat`` (25 fish) × effect(density), the effect being
  0, .30, .56, .69, .79, .88, .93, .98, 1, 1, 1 — boats still fill their holds when fish are scarce (the trap).

A season: every boat wants its catch at the start-of-season density; the catch is that, or the whole stock when
the stock is smaller, shared among the companies in proportion to their boats; regeneration comes from the
start-of-season density; stock' = stock − catch + regeneration. The stock therefore never goes negative.
One detail beyond the tables: the stock never exceeds its capacity, so regeneration is at most the room left
(never binding with the classic multiplier of 1, where stock + regeneration < capacity at every density).

Economics of the teaching game: a fish sells for ``fish_price`` ($20); a deep-sea boat costs ``boat_cost``
($250) a season to operate; profit = catch × price − boats × boat cost.
"""

from dataclasses import dataclass

import numpy as np

CLASSIC_CAPACITY = 4000.0
DENSITIES = np.linspace(0.0, 1.0, 11)
REGENERATION_TABLE = np.array([0, 58, 132, 212, 339, 517, 582, 517, 240, 74, 0], dtype=float)
CATCH_EFFECT_TABLE = np.array([0, 0.30, 0.56, 0.69, 0.79, 0.88, 0.93, 0.98, 1, 1, 1])
PEAK_DENSITY = float(DENSITIES[REGENERATION_TABLE.argmax()])  # 0.6: the density of maximum regeneration
_RISING = int(np.argmax(CATCH_EFFECT_TABLE)) + 1  # the effect is strictly increasing up to its first 1 (density 0.8)


def catch_effect(density: float) -> float:
    """The share of a full catch a boat lands at this density (the classic effect table)."""
    return float(np.interp(density, DENSITIES, CATCH_EFFECT_TABLE))


def density_from_effect(effect: float) -> float:
    """The inverse of :func:`catch_effect`: the density at which a boat lands this share of a full catch.

    The effect saturates at density 0.8, so a full catch says only "at least 0.8": the inverse reads it as 0.8,
    the most cautious density consistent with it.
    """
    return float(np.interp(effect, CATCH_EFFECT_TABLE[:_RISING], DENSITIES[:_RISING]))


@dataclass(frozen=True)
class Fishery:
    """The fishing ground's laws and prices: the classic model's parameters (defaults from the teaching game)."""

    capacity: float = CLASSIC_CAPACITY
    regeneration_multiplier: float = 1.0
    catch_per_boat: float = 25.0  # fish per boat per season at full effect
    fish_price: float = 20.0  # $ per fish
    boat_cost: float = 250.0  # $ per boat per season (deep sea)

    def density(self, stock: float) -> float:
        return stock / self.capacity

    def regeneration(self, density: float) -> float:
        """Net regeneration per season at this density, in fish (the hump, scaled to the capacity)."""
        scale = self.capacity / CLASSIC_CAPACITY * self.regeneration_multiplier
        return float(np.interp(density, DENSITIES, REGENERATION_TABLE)) * scale

    def catch_per_boat_at(self, density: float) -> float:
        """What one boat lands in a season at this density when the stock is not exhausted."""
        return self.catch_per_boat * catch_effect(density)

    def density_from_catch(self, catch_per_boat: float) -> float:
        """The density a company infers from its catch per boat (the inverse of the effect table)."""
        return density_from_effect(min(1.0, catch_per_boat / self.catch_per_boat))

    def profit_per_boat(self, catch_per_boat: float) -> float:
        return catch_per_boat * self.fish_price - self.boat_cost

    def season(self, stock: float, total_boats: int) -> tuple[float, float, float]:
        """One season on the ground: (catch, regeneration, stock after), from the start-of-season stock."""
        density = self.density(stock)
        catch = min(stock, total_boats * self.catch_per_boat_at(density))
        regeneration = min(self.regeneration(density), self.capacity - (stock - catch))
        return catch, regeneration, stock - catch + regeneration
