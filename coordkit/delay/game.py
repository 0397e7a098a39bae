"""The continuous prisoner's dilemma with communication delay (§3.1, Table 1): actions, payoffs, timing.

Time runs in ticks of Δt seconds. At tick t each player chooses C or D; its choice becomes *effective* on the
server at t + D_i, so the effective action of player i at tick t is its choice at tick t − D_i ("Unknown" before
the first choice arrives). Payoffs accrue every tick on the effective actions, and a trial lasts the effective
play time plus the longer delay, so that both players play ``duration_s`` seconds of effective game.
"""

from dataclasses import dataclass

import numpy as np

C, D, UNKNOWN = "C", "D", "?"
# the fast path codes actions as small integers
CODE = {C: 0, D: 1, UNKNOWN: -1}


@dataclass(frozen=True)
class Payoffs:
    """The dilemma's payoffs per tick (Table 1): T > R > P > S; an Unknown state pays nothing."""

    temptation: float = 5.0  # T: defect against a cooperator
    reward: float = 3.0  # R: mutual cooperation
    punishment: float = 1.0  # P: mutual defection
    sucker: float = 0.0  # S: cooperate against a defector

    def __post_init__(self):
        if not self.temptation > self.reward > self.punishment > self.sucker:
            raise ValueError(
                f"a prisoner's dilemma needs T > R > P > S, got T={self.temptation}, R={self.reward}, "
                f"P={self.punishment}, S={self.sucker}"
            )

    def of(self, own: str, other: str) -> float:
        """What a player earns in one tick with effective actions ``own`` and ``other``."""
        if UNKNOWN in (own, other):
            return 0.0
        return {(C, C): self.reward, (C, D): self.sucker, (D, C): self.temptation, (D, D): self.punishment}[own, other]

    def matrix(self) -> np.ndarray:
        """Payoff to the row player, indexed by action codes (C = 0, D = 1)."""
        return np.array([[self.reward, self.sucker], [self.temptation, self.punishment]])


@dataclass(frozen=True)
class Timing:
    """Tick length, effective play time, memory horizon and each player's delay, all in seconds."""

    delay_a: float = 0.0
    delay_b: float = 0.0
    duration_s: float = 60.0
    tick_s: float = 1.0
    memory_s: float = 15.0

    def __post_init__(self):
        if self.tick_s <= 0:
            raise ValueError(f"tick_s={self.tick_s}: a tick must last a positive time (the paper: 1 s)")
        for name in ("delay_a", "delay_b"):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"{name}={value}: a delay cannot be negative (0 = instant)")
            if abs(value / self.tick_s - round(value / self.tick_s)) > 1e-9:
                raise ValueError(f"{name}={value} s is not a whole number of {self.tick_s} s ticks; round it")
        if self.duration_s < self.tick_s:
            raise ValueError(f"duration_s={self.duration_s}: play at least one tick")
        if self.memory_s <= 0:
            raise ValueError(f"memory_s={self.memory_s}: players need a memory horizon > 0 (the paper: 15 s)")

    def ticks(self, seconds: float) -> int:
        return int(round(seconds / self.tick_s))

    @property
    def delays(self) -> tuple[int, int]:
        """Each player's delay in ticks."""
        return self.ticks(self.delay_a), self.ticks(self.delay_b)

    @property
    def total_ticks(self) -> int:
        """Effective play plus the longer delay (the authors' loop runs 60 + D ticks)."""
        return self.ticks(self.duration_s) + max(self.delays)


def outcome(a: str, b: str) -> str:
    """The state of a tick: "CC", "DD", "CD" (A exploited), "DC" (B exploited), or "?" before both arrive."""
    return UNKNOWN if UNKNOWN in (a, b) else a + b
