"""Movie scheduling's rule-based policies: whether to join, what REP and A2A agents say, and how the textual
updater reads it (REP paper §7, Appendix A). All deterministic and stateless.

- :class:`REPParticipation` — a REP agent's stage 1 (§7): it joins iff U ≥ 0 at its local proposal and sends
  its preference sensitivities. The numbers are ∂U/∂price and ∂U/∂time at the proposal (the paper's
  "∂U/∂price = −0.8") and, for the numerical updater, the proposal moved by (P²/2·∂U/∂p, T²/2·∂U/∂t). The
  words, in the textual modality, say what the numbers cannot: the ranges inside which the agent surely joins
  — its participation boundary ("Price matters more than timing — strongly budget constrained. I'd join at
  $9–$14, starting 19:00–21:30; now the price is $3 too high and the time suits me.").
- :class:`Satisficer` — an A2A agent (§7's baseline): it decides and explains in free words ("Too expensive
  for me at $18; I'd rather go later."), with no sensitivities. Rule-based A2A agents do not read their
  neighbours' reasoning; an LLM might.
- :class:`RangeSynthesis` — the textual updater's synthesiser without an LLM (Appendix A.4.2's call 2): it
  reads the ranges in the texts and proposes the smallest shift that brings the most writers inside theirs.
- :class:`StudentMoviegoer` — a student's rule in an agent (issue 45): the rule decides whether to join, the
  protocol keeps its messages.
"""

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from coordkit.policies import Classifier, DecisionError, Policy, StudentRule, decision_pair, policy_name
from coordkit.rep.movies import preferences
from coordkit.rep.movies.preferences import Taste
from coordkit.rep.protocol import Sensitivity, SynthesisRequest, Theta

PRICE = "price"
TIME = "time"
MODALITIES = ("numerical", "textual")


@dataclass(frozen=True)
class Situation:
    """What an agent sees when it decides in stage 1 whether to join (REP paper §7):

    - ``agent``: its node in the network; it is called "Agent 3" for node 3;
    - ``round``: the round being decided, from 1;
    - ``taste``: its :class:`~coordkit.rep.movies.preferences.Taste` — ideal ``price`` ($) and start ``time``
      (hours), the ``weight`` it gives price (1 − weight on time), the utility's scales ``price_scale`` and
      ``time_scale``;
    - ``price``, ``time``: its local proposal θ_i, a ticket price ($) and a start (hours after midnight: 20.5 is
      20:30);
    - ``neighbour_notes``: what its neighbours said last round, one note each ("Agent 3 joins: <its sensitivity or
      reasoning>"); empty in round 1, and for the built-in rules, which read only the agent's own taste.

    ``utility`` is U at the proposal and ``would_join`` whether U ≥ 0: the built-in rules join iff it is.
    """

    agent: int
    round: int
    taste: Taste
    price: float
    time: float
    neighbour_notes: tuple[str, ...] = ()

    @property
    def utility(self) -> float:
        """U at the proposal: 1 at the agent's ideal, less the weighted squared distances from it
        (:mod:`~coordkit.rep.movies.preferences`)."""
        return float(preferences.utility(self.taste, self.price, self.time))

    @property
    def would_join(self) -> bool:
        """Whether the proposal suits the agent's taste, U ≥ 0: what the built-in rules decide."""
        return bool(preferences.joins(self.taste, self.price, self.time))


@dataclass(frozen=True)
class Attendance:
    """An agent's stage-1 decision: whether it ``joins`` the movie night at its proposal and, optionally, the
    ``message`` an A2A agent sends with it. A policy may return the plain ``True`` or ``False`` instead, or a
    (joins, message) pair."""

    joins: bool
    message: str = ""


def attendance_of(decision: object, policy: object) -> Attendance:
    """``decision`` as an :class:`Attendance`; a :class:`~coordkit.policies.DecisionError` that names ``policy``,
    the value it returned and what a moviegoer decides, for anything else."""
    attendance = decision_pair(decision, Attendance)
    if isinstance(attendance.joins, bool | np.bool_) and isinstance(attendance.message, str):
        return Attendance(bool(attendance.joins), attendance.message)
    raise DecisionError(
        f"policy {policy_name(policy)!r} returned {decision!r}: a moviegoer decides whether to join, True or False, "
        "as a bool, a (joins, message) pair or Attendance(joins, message='')"
    )


def clock(hours: float) -> str:
    """A time of day: 20.25 → "20:15" (to the minute)."""
    minutes = round(hours * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def dollars(amount: float) -> str:
    """A price: 14.0 → "$14", 13.5 → "$13.50"."""
    cents = round(amount * 100)
    return f"${cents // 100}" if cents % 100 == 0 else f"${cents / 100:.2f}"


@dataclass(frozen=True)
class REPParticipation(Policy):
    """Join iff U ≥ 0 at the local proposal; send ∂U/∂price, ∂U/∂time and the numerical proposal, and a text
    in the chosen ``modality``: the numbers in words ("numerical"), or the participation ranges ("textual")."""

    modality: str = "textual"

    name = "rep_participation"
    classifier = Classifier()

    def __post_init__(self):
        if self.modality not in MODALITIES:
            raise ValueError(f"modality={self.modality!r}: choose one of {', '.join(MODALITIES)}")

    def decide(self, situation: Situation) -> tuple[bool, Sensitivity]:
        return situation.would_join, self.sensitivity(situation)

    def sensitivity(self, situation: Situation) -> Sensitivity:
        taste, price, time = situation.taste, situation.price, situation.time
        proposed_price, proposed_time = preferences.proposal(taste, price, time)
        values = {
            "dU/dprice": float(preferences.price_slope(taste, price)),
            "dU/dtime": float(preferences.time_slope(taste, time)),
            f"propose:{PRICE}": float(proposed_price),
            f"propose:{TIME}": float(proposed_time),
        }
        text = numbers_text(values) if self.modality == "numerical" else sensitivity_text(taste, price, time)
        return Sensitivity(values, text)


@dataclass(frozen=True)
class ThresholdParticipation(REPParticipation):
    """REP under the thresholds reading (docs/rep-readings.md): the situation's taste is the agent's participation
    ellipse centred on its thresholds and its price and time the group's proposal, so the agent joins iff it
    accepts the proposal and its sensitivities are taken there; the proposal it sends is its thresholds, which the
    numerical updater averages with its neighbours'."""

    name = "rep_threshold_participation"
    classifier = Classifier()

    def sensitivity(self, situation: Situation) -> Sensitivity:
        said = super().sensitivity(situation)
        thresholds = {f"propose:{PRICE}": float(situation.taste.price), f"propose:{TIME}": float(situation.taste.time)}
        return Sensitivity({**said.values, **thresholds}, said.text)


def numbers_text(values: dict[str, float]) -> str:
    """A numerical sensitivity in words, as the paper writes it: "∂U/∂price = -0.120, ∂U/∂time = +0.050"
    (per dollar and per hour)."""
    return f"∂U/∂price = {values['dU/dprice']:+.3f}, ∂U/∂time = {values['dU/dtime']:+.3f}"


def stated_ranges(taste: Taste) -> tuple[float, float, float, float]:
    """The comfort box (:func:`~coordkit.rep.movies.preferences.comfort_box`) rounded inward, as the text states
    it: prices to the half dollar, times to the quarter hour — still ranges where the agent surely joins."""
    price_low, price_high, time_low, time_high = (float(x) for x in preferences.comfort_box(taste))
    inward = (math.ceil(price_low * 2) / 2, math.floor(price_high * 2) / 2)
    return (*inward, math.ceil(time_low * 4) / 4, math.floor(time_high * 4) / 4)


def sensitivity_text(taste: Taste, price: float, time: float) -> str:
    """The templated textual sensitivity of a rule-based REP agent (§7's example, extended with its ranges)."""
    if taste.weight >= 0.6:
        priority = "Price matters more than timing — strongly budget constrained."
    elif taste.weight <= 0.4:
        priority = "Timing matters more than price — my evening is tightly planned."
    else:
        priority = "Price and timing matter about equally to me."
    price_low, price_high, time_low, time_high = stated_ranges(taste)
    if price > price_high:
        on_price = f"the price is {dollars(price - price_high)} too high"
    elif price < price_low:
        on_price = f"the price is {dollars(price_low - price)} too low"
    else:
        on_price = "the price suits me"
    if time > time_high:
        on_time = f"the start is {round((time - time_high) * 60)} min too late"
    elif time < time_low:
        on_time = f"the start is {round((time_low - time) * 60)} min too early"
    else:
        on_time = "the time suits me"
    suits = on_price == "the price suits me" and on_time == "the time suits me"
    now = "both suit me" if suits else f"{on_price} and {on_time}"
    return (
        f"{priority} I'd join at {dollars(price_low)}–{dollars(price_high)}, starting "
        f"{clock(time_low)}–{clock(time_high)}; now {now}."
    )


@dataclass(frozen=True)
class Satisficer(Policy):
    """An A2A agent: join iff U ≥ 0 at its proposal, and say why in a sentence (no sensitivities)."""

    name = "satisficer"
    classifier = Classifier()

    def decide(self, situation: Situation) -> tuple[bool, str]:
        joins = situation.would_join
        return joins, reasoning(situation, joins)


class StudentMoviegoer(StudentRule):
    """A student's rule in a moviegoer (issue 45): the rule decides from the agent's :class:`Situation` whether it
    joins, whatever the protocol; the protocol keeps its part. An A2A agent sends the rule's message, or the
    :class:`Satisficer`'s reasoning about that decision; a REP agent still sends its :class:`REPParticipation`
    sensitivity, so that the protocol shares it and updates θ as ever."""

    def decide(self, situation: Situation) -> tuple[bool, Sensitivity | str]:
        attendance = attendance_of(self.student.decide(situation), self.student)
        if isinstance(self.rule, REPParticipation):
            return attendance.joins, self.rule.sensitivity(situation)
        return attendance.joins, attendance.message or reasoning(situation, attendance.joins)


def reasoning(situation: Situation, joins: bool) -> str:
    """The A2A message: the decision, explained by the variable that hurts most and the way the other should go."""
    taste, price, time = situation.taste, situation.price, situation.time
    offer = f"{dollars(price)} at {clock(time)}"
    if joins:
        return f"Works for me: {offer} is fine."
    price_gap = (price - taste.price) / taste.price_scale
    time_gap = (time - taste.time) / taste.time_scale
    price_loss, time_loss = taste.weight * price_gap**2, (1 - taste.weight) * time_gap**2
    if price_loss >= time_loss:
        complaint = f"Too {'expensive' if price_gap > 0 else 'cheap a show'} for me at {dollars(price)}"
        wish = "" if abs(time_gap) < 0.25 else f"; I'd rather go {'earlier' if time_gap > 0 else 'later'}"
    else:
        complaint = f"Too {'late' if time_gap > 0 else 'early'} for me at {clock(time)}"
        wish = "" if abs(price_gap) < 0.25 else f"; I'd rather pay {'less' if price_gap > 0 else 'more'}"
    return f"{complaint}{wish}."


_RANGES = re.compile(
    r"join at \$(\d+(?:\.\d+)?)\s*[–-]\s*\$(\d+(?:\.\d+)?),?\s*starting\s*(\d{1,2}):(\d\d)\s*[–-]\s*(\d{1,2}):(\d\d)",
    re.IGNORECASE,
)


def read_ranges(texts: list[str]) -> tuple[tuple[float, float, float, float], ...]:
    """Every "I'd join at $LOW–$HIGH, starting HH:MM–HH:MM" in the texts, as rows (price_low, price_high,
    time_low, time_high); a text may state none."""
    return tuple(row for text in texts for row in _ranges_in(text))


@lru_cache(maxsize=4096)
def _ranges_in(text: str) -> tuple[tuple[float, float, float, float], ...]:
    """One text's ranges (read once: a round's texts reach every neighbour of their writers)."""
    return tuple(
        (float(m[1]), float(m[2]), int(m[3]) + int(m[4]) / 60, int(m[5]) + int(m[6]) / 60)
        for m in _RANGES.finditer(text)
    )


def most_covered(
    stated: tuple[tuple[float, float, float, float], ...],
    price: float,
    time: float,
    price_scale: float,
    time_scale: float,
) -> Theta:
    """The point nearest (price, time) — in units of the scales — that lies inside the most ``stated`` ranges
    (rows as :func:`read_ranges` gives them).

    Coverage is constant on the cells the range ends cut out, so the nearest point of a best cell has each
    coordinate either the current one or a range end: those are the only candidates.
    """
    best_price, best_time = _most_covered(stated, price, time, price_scale, time_scale)
    return {PRICE: best_price, TIME: best_time}


@lru_cache(maxsize=4096)
def _most_covered(stated: tuple, price: float, time: float, price_scale: float, time_scale: float) -> tuple:
    """:func:`most_covered`'s (price, time), remembered: an agent's ranges are its taste's, so once its proposal
    settles it asks the same question round after round (nine calls in ten at 20 agents)."""
    stated = np.array(stated, dtype=float).reshape(-1, 4)
    prices = np.unique(np.concatenate([[price], stated[:, 0], stated[:, 1]]))
    times = np.unique(np.concatenate([[time], stated[:, 2], stated[:, 3]]))
    in_price = (stated[:, [0]] <= prices) & (prices <= stated[:, [1]])  # (writers, candidate prices)
    in_time = (stated[:, [2]] <= times) & (times <= stated[:, [3]])
    coverage = in_price.T.astype(int) @ in_time.astype(int)  # (candidate prices, candidate times)
    distance = ((prices[:, None] - price) / price_scale) ** 2 + ((times[None, :] - time) / time_scale) ** 2
    best = np.flatnonzero((coverage == coverage.max()).ravel())
    choice = best[np.argmin(distance.ravel()[best])]  # ties: the first, i.e. the lowest price, then time
    row, col = divmod(int(choice), len(times))
    return float(prices[row]), float(times[col])


@dataclass(frozen=True)
class RangeSynthesis(Policy):
    """The textual updater's synthesiser without an LLM: read every "I'd join at …" range in the agent's own and
    its neighbours' texts, and propose the point inside the most of them nearest the current θ (distances in
    units of the utility's scales). Texts without ranges leave θ unchanged."""

    price_scale: float = 5.0
    time_scale: float = 2.0

    name = "range_synthesis"
    classifier = Classifier()

    def decide(self, request: SynthesisRequest) -> Theta:
        stated = read_ranges([request.own_text, *(text for _, text in request.neighbour_texts)])
        if len(stated) == 0:
            return dict(request.theta)
        theta = request.theta
        return most_covered(stated, theta[PRICE], theta[TIME], self.price_scale, self.time_scale)
