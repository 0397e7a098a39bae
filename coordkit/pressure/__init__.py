"""Pressure fields and temporal decay on Latin squares (Rodriguez 2026): agents coordinate through a shared
artifact whose per-row "pressure" says what is still wrong, instead of through messages.

``puzzles`` makes unique-solution puzzles, ``pressure`` measures them, ``model`` is the Mesa model with the paper's
algorithm and its baselines (``strategies``), ``design`` the trial design and the cells every figure sweeps,
``experiments`` the paper's Tables 2–7, ``calibration`` the one fit of the kit's tiers.
"""

from coordkit.pressure.model import PressureField
from coordkit.pressure.strategies import STRATEGIES

__all__ = ["STRATEGIES", "PressureField"]
