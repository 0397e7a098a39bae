"""The simplified model (§4.2) vectorised over many trials with numpy: the same game as :class:`DelayedDilemma`
with two "simplified" players, tick for tick and draw for draw.

Trial k with seed s_k draws, like the Mesa model, two uniforms per player per tick from
``numpy.random.default_rng(s_k)`` — player A first — so both paths give identical trials for the same seeds.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coordkit.delay.game import CODE, D, Timing
from coordkit.delay.policies import check_probability

_UNKNOWN, _DEFECT = CODE["?"], CODE[D]


@dataclass(frozen=True)
class Trials:
    """Effective actions per player, trial and tick (codes: C = 0, D = 1, Unknown = −1), and the timing."""

    effective: np.ndarray  # shape (2, trials, ticks)
    timing: Timing


def simulate(
    seeds: Sequence[int], p: float, alpha: float, delay_a: float, delay_b: float | None = None,
    duration_s: float = 60.0, tick_s: float = 1.0,
) -> Trials:
    """One trial per seed of two simplified-model players (tit-for-tat with probability p, else defect with
    probability α·D_i)."""
    check_probability("p", p)
    if alpha < 0:
        raise ValueError(f"alpha={alpha} must not be negative (the paper uses 0.1 and 0.2)")
    timing = Timing(delay_a, delay_a if delay_b is None else delay_b, duration_s, tick_s)
    ticks, delays = timing.total_ticks, timing.delays
    draws = np.stack([np.random.default_rng(seed).random((ticks, 2, 2)) for seed in seeds])
    tempted = [draws[:, :, i, 1] < min(1.0, alpha * delays[i] * tick_s) for i in (0, 1)]
    follows = draws[:, :, :, 0] < p
    choices = np.zeros((2, len(seeds), ticks), dtype=np.int8)
    for t in range(ticks):
        for i in (0, 1):
            made = t - 1 - delays[1 - i]  # the opponent's choice in effect at t − 1
            seen_defect = choices[1 - i, :, made] == _DEFECT if made >= 0 else False
            choices[i, :, t] = np.where(follows[:, t, i], seen_defect, tempted[i][:, t])
    effective = np.full_like(choices, _UNKNOWN)
    for i in (0, 1):
        effective[i, :, delays[i]:] = choices[i, :, : ticks - delays[i]]
    return Trials(effective, timing)
