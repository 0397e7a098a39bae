"""The continuous prisoner's dilemma with communication delay (§3.1, Table 1): actions, payoffs, timing.

Time runs in ticks of Δt seconds, numbered from 1 (tick 0 is the state before anyone chooses). At tick t each
player chooses C or D; its choice becomes *effective* on the server D_i seconds later, so the effective action of
player i at tick t is its choice at tick t − D_i/Δt ("Unknown" before the first choice arrives). Payoffs accrue every
tick on the effective actions, and a trial lasts the effective play time plus the longer delay, so that both players
play ``duration_s`` seconds of effective game.
"""

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

C, D, UNKNOWN = "C", "D", "?"
# the fast path codes actions as small integers
CODE = {C: 0, D: 1, UNKNOWN: -1}


@dataclass(frozen=True)
class Payoffs:
    """The dilemma's payoffs per tick (Table 1): T > R > P > S, all finite; an Unknown state pays nothing."""

    temptation: float = 5.0  # T: defect against a cooperator
    reward: float = 3.0  # R: mutual cooperation
    punishment: float = 1.0  # P: mutual defection
    sucker: float = 0.0  # S: cooperate against a defector

    def __post_init__(self):
        values = (self.temptation, self.reward, self.punishment, self.sucker)
        if not (all(math.isfinite(value) for value in values) and values[0] > values[1] > values[2] > values[3]):
            raise ValueError(
                f"a prisoner's dilemma needs finite payoffs with T > R > P > S, got T={self.temptation}, "
                f"R={self.reward}, P={self.punishment}, S={self.sucker}"
            )

    def of(self, own: str, other: str) -> float:
        """What a player earns in one tick with effective actions ``own`` and ``other`` (nothing if either is
        Unknown)."""
        return self._by_actions.get((own, other), 0.0)

    @cached_property
    def _by_actions(self) -> dict[tuple[str, str], float]:
        return {(C, C): self.reward, (C, D): self.sucker, (D, C): self.temptation, (D, D): self.punishment}

    def matrix(self) -> np.ndarray:
        """Payoff to the row player, indexed by action codes (C = 0, D = 1)."""
        return np.array([[self.reward, self.sucker], [self.temptation, self.punishment]])


TABLE_1 = Payoffs()  # the paper's payoffs


@dataclass(frozen=True)
class Timing:
    """Tick length, effective play time, memory horizon and each player's delay, all in seconds (checked by
    :class:`~coordkit.delay.model.DelayedDilemma`'s parameters: whole ticks, at least one tick of play)."""

    delay_a: float = 0.0
    delay_b: float = 0.0
    duration_s: float = 60.0
    tick_s: float = 1.0
    memory_s: float = 15.0

    def ticks(self, seconds: float) -> int:
        return int(round(seconds / self.tick_s))

    @cached_property
    def delays(self) -> tuple[int, int]:
        """Each player's delay in ticks."""
        return self.ticks(self.delay_a), self.ticks(self.delay_b)

    @cached_property
    def total_ticks(self) -> int:
        """Effective play plus the longer delay (the authors' loop runs 60 + D ticks)."""
        return self.ticks(self.duration_s) + max(self.delays)


def outcome(a: str, b: str) -> str:
    """The state of a tick: "CC", "DD", "CD" (A exploited), "DC" (B exploited), or "?" before both arrive."""
    return UNKNOWN if UNKNOWN in (a, b) else a + b
