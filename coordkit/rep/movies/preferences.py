"""Moviegoers' preferences over the two coordination variables PRICE and TIME (REP paper §7, Table 1).

The paper gives each agent "distinct budget and scheduling constraints" and a utility U but neither its form
nor its distribution: the kit chooses, and says so. Agent j has an ideal ticket price p_j ($), an ideal start
time t_j (hours after midnight) and a price weight w_j ∈ (0, 1) (1 − w_j on time), and

    U_j(p, t) = 1 − w_j·((p − p_j)/P)² − (1 − w_j)·((t − t_j)/T)²,

with scales P (dollars) and T (hours): a proposal one scale away from the ideal on one variable costs that
variable's whole weight. Agent j joins iff U_j ≥ 0. The ideals are drawn once per run: p_j ~ N($12, $4)
clipped to [$4, $30], t_j ~ N(20:00, 1.5 h) clipped to the evening [17:00, 23:00], w_j ~ U(0.2, 0.8),
P = $5, T = 2 h (the model's defaults, chosen once, not fitted to the paper).

Every function is elementwise arithmetic on a :class:`Taste` — one agent's floats, or a :class:`Preferences`
of arrays, one entry per agent — so that the Mesa model (agent by agent) and the vectorised fast path compute
the very same floats.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

PRICE_RANGE = (4.0, 30.0)  # $: where ideals and proposals live
EVENING = (17.0, 23.0)  # hours: start times from 17:00 to 23:00
WEIGHT_RANGE = (0.2, 0.8)  # the price weight w_j ~ U(0.2, 0.8)


@dataclass(frozen=True)
class Taste:
    """One agent's preferences: ideal price and start time, the weight it gives price, and the utility's scales."""

    price: float  # p_j ($)
    time: float  # t_j (hours)
    weight: float  # w_j, the weight of price (1 − w_j on time)
    price_scale: float  # P ($)
    time_scale: float  # T (hours)


@dataclass(frozen=True)
class Preferences:
    """The whole population's preferences as arrays (a :class:`Taste` with one entry per agent)."""

    price: np.ndarray
    time: np.ndarray
    weight: np.ndarray
    price_scale: float
    time_scale: float

    def __len__(self) -> int:
        return len(self.price)

    def of(self, agent: int) -> Taste:
        """Agent ``agent``'s taste, as plain floats."""
        return Taste(
            float(self.price[agent]),
            float(self.time[agent]),
            float(self.weight[agent]),
            self.price_scale,
            self.time_scale,
        )


def draw(
    rng: np.random.Generator,
    n: int,
    *,
    price_mean: float,
    price_sd: float,
    time_mean: float,
    time_sd: float,
    price_scale: float,
    time_scale: float,
) -> Preferences:
    """``n`` agents' preferences from one row of three standard normal draws z per agent, in the agents' order:
    the ideal price is price_mean + price_sd·z₁ (clipped), the ideal start time_mean + time_sd·z₂ (clipped), and
    the price weight spreads Φ(z₃), uniform on (0, 1), over :data:`WEIGHT_RANGE`. So more agents keep the first
    agents' tastes, and a mean or a spread moves every ideal without drawing anyone anew (common random numbers)."""
    from scipy.special import ndtr  # here: the stand-in's server process, which draws no one, starts without SciPy

    z = rng.standard_normal((n, 3))
    price = np.clip(price_mean + price_sd * z[:, 0], *PRICE_RANGE)
    time = np.clip(time_mean + time_sd * z[:, 1], *EVENING)
    low, high = WEIGHT_RANGE
    weight = low + (high - low) * ndtr(z[:, 2])
    return Preferences(price, time, weight, float(price_scale), float(time_scale))


def utility(taste: Taste | Preferences, price, time):
    """U(p, t) = 1 − w·((p − p_j)/P)² − (1 − w)·((t − t_j)/T)²."""
    price_gap = (price - taste.price) / taste.price_scale
    time_gap = (time - taste.time) / taste.time_scale
    return 1 - taste.weight * (price_gap * price_gap) - (1 - taste.weight) * (time_gap * time_gap)


def joins(taste: Taste | Preferences, price, time):
    """Whether the agent would join at (price, time): U ≥ 0."""
    return utility(taste, price, time) >= 0


def price_slope(taste: Taste | Preferences, price):
    """∂U/∂price = −2·w·(p − p_j)/P², per dollar."""
    return -2 * taste.weight * (price - taste.price) / (taste.price_scale * taste.price_scale)


def time_slope(taste: Taste | Preferences, time):
    """∂U/∂time = −2·(1 − w)·(t − t_j)/T², per hour."""
    return -2 * (1 - taste.weight) * (time - taste.time) / (taste.time_scale * taste.time_scale)


def proposal(taste: Taste | Preferences, price, time):
    """The numerical updater's proposal: θ moved by (P²/2·∂U/∂p, T²/2·∂U/∂t), that is by w·(p_j − p) and
    (1 − w)·(t_j − t) — the gradient step that lands on the ideal for w = 1."""
    return (
        price + taste.price_scale * taste.price_scale / 2 * price_slope(taste, price),
        time + taste.time_scale * taste.time_scale / 2 * time_slope(taste, time),
    )


def centred(taste: Taste | Preferences, price, time) -> Taste | Preferences:
    """The taste with its ideal moved to (price, time): under the thresholds reading, what the agent accepts is its
    participation ellipse centred on its thresholds (docs/rep-readings.md)."""
    return dataclasses.replace(taste, price=price, time=time)


def pulled_in(taste: Taste | Preferences, price, time):
    """(price, time) pulled straight towards the taste's ideal until the taste would join there: itself when U ≥ 0,
    else the point where the line to the ideal meets the ellipse U = 0 (thresholds reading: an agent's local
    preference vote, and the bound its own participation ellipse sets on its thresholds)."""
    outside = 1 - utility(taste, price, time)  # w·Δp² + (1 − w)·Δt² in the scales' units: above 1 outside
    shrink = 1 / np.sqrt(np.maximum(outside, 1))
    pulled_price = taste.price + (price - taste.price) * shrink
    pulled_time = taste.time + (time - taste.time) * shrink
    return np.where(outside > 1, pulled_price, price), np.where(outside > 1, pulled_time, time)


def comfort_box(taste: Taste | Preferences):
    """The price range and the start-time range inside which the agent surely joins: the box inscribed in its
    participation ellipse U ≥ 0 that spends half the utility on each variable, p_j ± P/√(2w) and
    t_j ± T/√(2(1 − w)), clipped to the price range and the evening. Returns (price_low, price_high,
    time_low, time_high)."""
    price_half = taste.price_scale / np.sqrt(2 * taste.weight)
    time_half = taste.time_scale / np.sqrt(2 * (1 - taste.weight))
    return (
        np.maximum(taste.price - price_half, PRICE_RANGE[0]),
        np.minimum(taste.price + price_half, PRICE_RANGE[1]),
        np.maximum(taste.time - time_half, EVENING[0]),
        np.minimum(taste.time + time_half, EVENING[1]),
    )
