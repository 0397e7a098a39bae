"""The simplified model (§4.2) vectorised over many trials with numpy: the same game as :class:`DelayedDilemma`
with two "simplified" players, tick for tick and draw for draw.

Trial k with seed s_k draws, like the Mesa model, two uniforms per player per tick, each player from its own stream
(player A's is ``stream_sequence(s_k, "player", 0)``, B's ``(…, 1)``: :mod:`coordkit.streams`), so both paths give
identical trials for the same seeds.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from coordkit.delay.game import CODE, D, Timing
from coordkit.delay.model import DelayedDilemma
from coordkit.seeds import check_seeds
from coordkit.streams import stream_sequence

_UNKNOWN, _DEFECT = CODE["?"], CODE[D]
KEPT = 2**20  # trials × ticks: the most draws kept for the next call (32 MB)


@dataclass(frozen=True)
class Trials:
    """Effective actions per player, trial and tick (codes: C = 0, D = 1, Unknown = −1), and the timing.

    Tick t = 1, 2, … of the Mesa model is index t − 1 here: the initial state is not stored."""

    effective: np.ndarray  # shape (2, trials, ticks)
    timing: Timing


def simulate(
    seeds: Sequence[int],
    p: float,
    alpha: float,
    delay_a: float,
    delay_b: float | None = None,
    duration_s: float = 60.0,
    tick_s: float = 1.0,
) -> Trials:
    """One trial per seed of two simplified-model players (tit-for-tat with probability p, else defect with
    probability α·D_i). The seeds are non-negative integers (:func:`~coordkit.seeds.check_seeds`); the values are
    checked against :class:`DelayedDilemma`'s parameters."""
    seeds = check_seeds(seeds)
    given = {"p": p, "alpha": alpha, "delay_a": delay_a, "delay_b": delay_b, "duration_s": duration_s, "tick_s": tick_s}
    values = DelayedDilemma.parameters.resolve(given, owner="fast.simulate")
    delay_b = values["delay_a"] if values["delay_b"] is None else values["delay_b"]
    timing = Timing(values["delay_a"], delay_b, values["duration_s"], values["tick_s"])
    ticks, delays = timing.total_ticks, timing.delays
    uniforms = draws(seeds, ticks)
    tempted = [uniforms[:, :, i, 1] < min(1.0, values["alpha"] * delays[i] * timing.tick_s) for i in (0, 1)]
    follows = uniforms[:, :, :, 0] < values["p"]
    choices = np.zeros((2, len(seeds), ticks), dtype=np.int8)
    for t in range(ticks):
        for i in (0, 1):
            made = t - 1 - delays[1 - i]  # the opponent's choice in effect at t − 1
            seen_defect = choices[1 - i, :, made] == _DEFECT if made >= 0 else False
            choices[i, :, t] = np.where(follows[:, t, i], seen_defect, tempted[i][:, t])
    effective = np.full_like(choices, _UNKNOWN)
    for i in (0, 1):
        effective[i, :, delays[i] :] = choices[i, :, : ticks - delays[i]]
    return Trials(effective, timing)


def draws(seeds: list[int], ticks: int) -> np.ndarray:
    """The uniforms of every trial, shape (trials, ticks, player, 2). A panel plays the same seeds at each change of
    its controls, and Fig. 4 at each delay: their draws are kept (:func:`kept_draws`), up to :data:`KEPT` of them,
    drawn for the next power of two of ticks so that a longer trial mostly finds them. A generator's uniforms come
    one after another, so a shorter trial's draws are the first ticks of a longer one's."""
    capacity = max(64, 1 << (ticks - 1).bit_length())
    if len(seeds) * capacity > KEPT:
        return np.stack([player_draws(seed, ticks) for seed in seeds])
    return kept_draws(tuple(seeds), capacity)[:, :ticks]


@lru_cache(maxsize=2)
def kept_draws(seeds: tuple[int, ...], ticks: int) -> np.ndarray:
    """:func:`draws`, kept for the next call (read-only)."""
    drawn = np.stack([player_draws(seed, ticks) for seed in seeds])
    drawn.setflags(write=False)
    return drawn


def player_draws(seed: int, ticks: int) -> np.ndarray:
    """The uniforms both players of the trial with ``seed`` draw, shape (ticks, player, 2): what player i's stream
    gives :class:`~coordkit.delay.policies.SimplifiedModel` at each tick."""
    return np.stack([np.random.default_rng(stream_sequence(seed, "player", i)).random((ticks, 2)) for i in (0, 1)], 1)
