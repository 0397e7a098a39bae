"""Movie scheduling with REP textual agents, in plain Mesa (REP §7), on the minimal REP numerical model's network,
tastes and vote (``movies``): each round every agent joins iff U >= 0 at its own proposal θ_i and writes its
neighbours a text that states its priority and the ranges it would surely join at (the box inside its U >= 0
ellipse that spends half the utility on each variable, rounded inward: prices to the half dollar, times to the
quarter hour); then it reads the ranges in its own and its neighbours' texts and moves θ_i to the point inside the
most of them nearest θ_i (in units of the utility's scales; ties to the lowest price, then time), as the kit's
rule-based synthesiser does (``coordkit.rep.movies.policies.RangeSynthesis``, step 1)."""

import math
import re

import numpy as np

from minimal_mesa import movies

RANGES = re.compile(r"I'd join at \$(\d+(?:\.\d+)?)–\$(\d+(?:\.\d+)?), starting (\d+):(\d\d)–(\d+):(\d\d)")


def clock(hours: float) -> str:
    minutes = round(hours * 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


def dollars(amount: float) -> str:
    return f"${amount:.2f}".replace(".00", "")


class TextualMoviegoer(movies.Moviegoer):
    def ranges(self):
        """The comfort box p_j ± P/√(2w), t_j ± T/√(2(1 − w)), clipped and rounded inward."""
        price_half = movies.PRICE_SCALE / math.sqrt(2 * self.weight)
        time_half = movies.TIME_SCALE / math.sqrt(2 * (1 - self.weight))
        price_low, price_high = max(self.ideal_price - price_half, 4.0), min(self.ideal_price + price_half, 30.0)
        time_low, time_high = max(self.ideal_time - time_half, 17.0), min(self.ideal_time + time_half, 23.0)
        return (
            math.ceil(price_low * 2) / 2,
            math.floor(price_high * 2) / 2,
            math.ceil(time_low * 4) / 4,
            math.floor(time_high * 4) / 4,
        )

    def decide(self):
        """Join iff U ≥ 0 at θ_i; write the priority, the ranges and how θ_i sits in them."""
        self.joins = self.utility(self.price, self.time) >= 0
        if self.weight >= 0.6:
            priority = "Price matters more than timing — strongly budget constrained."
        elif self.weight <= 0.4:
            priority = "Timing matters more than price — my evening is tightly planned."
        else:
            priority = "Price and timing matter about equally to me."
        low, high, early, late = self.ranges()
        if self.price > high:
            on_price = f"the price is {dollars(self.price - high)} too high"
        elif self.price < low:
            on_price = f"the price is {dollars(low - self.price)} too low"
        else:
            on_price = "the price suits me"
        if self.time > late:
            on_time = f"the start is {round((self.time - late) * 60)} min too late"
        elif self.time < early:
            on_time = f"the start is {round((early - self.time) * 60)} min too early"
        else:
            on_time = "the time suits me"
        now = "both suit me" if on_price == "the price suits me" and on_time == "the time suits me" else ""
        self.message = (
            f"{priority} I'd join at {dollars(low)}–{dollars(high)}, starting {clock(early)}–{clock(late)}; "
            f"now {now or f'{on_price} and {on_time}'}."
        )

    def update(self):
        """θ_i ← the point inside the most stated ranges nearest θ_i."""
        texts = [self.message] + [self.model.goers[j].message for j in self.model.graph.adj[self.node]]
        stated = np.array(
            [
                (float(m[1]), float(m[2]), int(m[3]) + int(m[4]) / 60, int(m[5]) + int(m[6]) / 60)
                for text in texts
                for m in RANGES.finditer(text)
            ]
        )
        prices = np.unique(np.concatenate([[self.price], stated[:, 0], stated[:, 1]]))
        times = np.unique(np.concatenate([[self.time], stated[:, 2], stated[:, 3]]))
        in_price = (stated[:, [0]] <= prices) & (prices <= stated[:, [1]])
        in_time = (stated[:, [2]] <= times) & (times <= stated[:, [3]])
        coverage = in_price.T.astype(int) @ in_time.astype(int)
        distance = ((prices[:, None] - self.price) / movies.PRICE_SCALE) ** 2 + (
            (times[None, :] - self.time) / movies.TIME_SCALE
        ) ** 2
        best = np.flatnonzero((coverage == coverage.max()).ravel())
        row, column = divmod(int(best[np.argmin(distance.ravel()[best])]), len(times))
        self.price, self.time = float(prices[row]), float(times[column])


class MovieScheduling(movies.MovieScheduling):
    goer_class = TextualMoviegoer


def one_run(seed: int) -> MovieScheduling:
    model = MovieScheduling(rng=seed)
    model.run_model()
    return model
