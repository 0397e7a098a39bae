"""Cooperation under communication delay: the continuous prisoner's dilemma of Nishimoto, Asatani and Sakata.

Two players change between cooperating and defecting every tick; each change reaches the shared server — and the
opponent — only after the player's own delay (§3). :class:`DelayedDilemma` is one trial as a Mesa model; ``fast``
plays the simplified model's trials (§4.2) vectorised over thousands of trials; ``experiments`` the paper's figures.
"""

from coordkit.delay.model import POLICIES, DelayedDilemma

__all__ = ["POLICIES", "DelayedDilemma"]
