"""The decision rules: what a claim's test (a column of ``data/papers/claims.csv``) makes of the kit's estimate.

Every rule gives one of four verdicts and a one-line reason:

- **holds**: the effect is there, its 95% interval clear of the reference, and the kit's number in the claim's
  band where the claim states a size;
- **holds in direction, not in size**: the effect is there, beyond its interval, but the number lies outside
  the band;
- **not reproduced**: the interval does not clear the reference, or the shape or the size is not there, whatever
  the point estimate says;
- **needs LLM agents**: the claim is about what LLMs do, which rule-based agents cannot test.

The tests (a curve is judged at every point unless said otherwise):

- ``greater`` / ``less``: in direction when the interval lies above / below ``reference``; in size when the
  value lies in ``band`` too (a claim without a band is a claim of direction only).
- ``at_least`` / ``at_most``: a threshold, which has no direction: holds when the whole interval is at or above /
  at or below ``reference``.
- ``within``: holds when the value lies in ``band``.
- ``equivalent``: holds when the whole interval of a difference lies in ``band``.
- ``u_shape`` / ``inverted_u`` (a curve): in direction when an inner point's interval lies below / above both
  ends' intervals; in size when that point's x lies in ``band``.
- ``increasing`` / ``decreasing`` (a curve): in direction when the last point's interval lies above / below the
  first's; in size when last − first lies in ``band``.
- ``flat`` (a curve): holds when the intervals all share a value.
- ``llm``: needs LLM agents; nothing is measured.

An estimate from one run has no interval: it can meet a threshold or a band, never show a direction or a shape.
"""

import math
from dataclasses import dataclass

from coordkit.replication.estimates import SYMBOLS, Curve, Estimate, number

HOLDS = "holds"
DIRECTION_ONLY = "holds in direction, not in size"
NOT_REPRODUCED = "not reproduced"
NEEDS_LLM = "needs LLM agents"
VERDICTS = (HOLDS, DIRECTION_ONLY, NOT_REPRODUCED, NEEDS_LLM)

TESTS = (
    "greater",
    "less",
    "at_least",
    "at_most",
    "within",
    "equivalent",
    "u_shape",
    "inverted_u",
    "increasing",
    "decreasing",
    "flat",
    "llm",
)
NEEDS_REFERENCE = ("greater", "less", "at_least", "at_most")
NEEDS_BAND = ("within", "equivalent")
CURVES_ONLY = ("u_shape", "inverted_u", "increasing", "decreasing", "flat")


@dataclass(frozen=True)
class Band:
    """The size a claim states, from ``low`` to ``high`` (either end may be open: ±inf)."""

    low: float
    high: float

    @classmethod
    def parse(cls, text: str) -> "Band | None":
        """ "30..55" → Band(30, 55); "..35" and "70.." leave an end open; "" → None."""
        if not text.strip():
            return None
        low, dots, high = text.partition("..")
        if not dots:
            raise ValueError(f"band {text!r} is not LOW..HIGH (either end may be left out: '..35', '70..')")
        band = cls(float(low) if low.strip() else -math.inf, float(high) if high.strip() else math.inf)
        if not band.low <= band.high:
            raise ValueError(f"band {text!r} runs backwards: its low end must not exceed its high end")
        return band

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def text(self, unit: str = "") -> str:
        if math.isinf(self.low):
            return f"the band of at most {number(self.high, unit)}"
        if math.isinf(self.high):
            return f"the band of at least {number(self.low, unit)}"
        return f"the band {number(self.low, unit if unit in SYMBOLS else '')} to {number(self.high, unit)}"


@dataclass(frozen=True)
class Decision:
    verdict: str
    reason: str


def decide(test: str, measured: Estimate | Curve | None, reference: float | None, band: Band | None) -> Decision:
    """The verdict of ``test`` on ``measured`` (see the module docstring)."""
    if test == "llm":
        return Decision(NEEDS_LLM, "rule-based agents cannot test what LLMs would do")
    if test in CURVES_ONLY and not isinstance(measured, Curve):
        raise TypeError(f"the test {test!r} needs a curve, got {type(measured).__name__}")
    rules = {
        "greater": lambda: _direction(measured, reference, band, above=True),
        "less": lambda: _direction(measured, reference, band, above=False),
        "at_least": lambda: _threshold(measured, reference, at_least=True),
        "at_most": lambda: _threshold(measured, reference, at_least=False),
        "within": lambda: _within(measured, band),
        "equivalent": lambda: _equivalent(measured, band),
        "u_shape": lambda: _extreme(measured, band, lowest=True),
        "inverted_u": lambda: _extreme(measured, band, lowest=False),
        "increasing": lambda: _trend(measured, band, rising=True),
        "decreasing": lambda: _trend(measured, band, rising=False),
        "flat": lambda: _flat(measured),
    }
    if test not in rules:
        raise ValueError(f"test={test!r} is not one of {TESTS}")
    return rules[test]()


def _points(measured: Estimate | Curve) -> list[tuple[str, Estimate]]:
    """(where, estimate) for each point: "" for a single estimate, "at 5 s: " on a curve."""
    if isinstance(measured, Curve):
        return [(f"at {measured.label(x)}: ", estimate) for x, estimate in measured.points]
    return [("", measured)]


def _direction(measured, reference: float, band: Band | None, above: bool) -> Decision:
    side = "above" if above else "below"
    points = _points(measured)
    for where, e in points:
        if not e.has_interval:
            return Decision(NOT_REPRODUCED, f"{where}one run gives no interval, so no direction can be shown")
        if not (e.low > reference if above else e.high < reference):
            return Decision(NOT_REPRODUCED, f"{where}the interval does not lie {side} {number(reference, e.unit)}")
    unit = points[0][1].unit
    cleared = f"the interval lies {side} {number(reference, unit)}"
    outside = [(where, e) for where, e in points if band is not None and e.value not in band]
    if outside:
        where, e = outside[0]
        return Decision(DIRECTION_ONLY, f"{cleared}, but {where}{number(e.value, unit)} lies outside {band.text(unit)}")
    return Decision(HOLDS, cleared + (f", and the value in {band.text(unit)}" if band is not None else ""))


def _threshold(measured, reference: float, at_least: bool) -> Decision:
    bound = "at least" if at_least else "at most"
    for where, e in _points(measured):
        low, high = (e.low, e.high) if e.has_interval else (e.value, e.value)
        if not (low >= reference if at_least else high <= reference):
            what = "the interval reaches" if e.has_interval and low != high else "the value is"
            beyond = number(low if at_least else high, e.unit)
            return Decision(NOT_REPRODUCED, f"{where}{what} {beyond}, not {bound} {number(reference, e.unit)}")
    return Decision(HOLDS, f"everything measured is {bound} {number(reference, _points(measured)[0][1].unit)}")


def _within(measured, band: Band) -> Decision:
    unit = _points(measured)[0][1].unit
    for where, e in _points(measured):
        if e.value not in band:
            return Decision(NOT_REPRODUCED, f"{where}{number(e.value, unit)} lies outside {band.text(unit)}")
    return Decision(HOLDS, f"the value lies in {band.text(unit)}")


def _equivalent(measured: Estimate, band: Band) -> Decision:
    if not measured.has_interval:
        return Decision(NOT_REPRODUCED, "one run gives no interval, so equivalence cannot be shown")
    if measured.low in band and measured.high in band:
        return Decision(HOLDS, f"the whole interval lies in {band.text(measured.unit)}")
    inside = "the value lies inside it" if measured.value in band else "even the value lies outside"
    return Decision(NOT_REPRODUCED, f"the interval reaches beyond {band.text(measured.unit)} ({inside})")


def _extreme(curve: Curve, band: Band | None, lowest: bool) -> Decision:
    estimates = curve.estimates
    if len(estimates) < 3:
        raise ValueError("a U needs a curve of three points at least")
    pick = min if lowest else max
    k = pick(range(1, len(estimates) - 1), key=lambda i: estimates[i].value)
    ends, inner = (estimates[0], estimates[-1]), estimates[k]
    shape, where = ("a U" if lowest else "an inverted U"), curve.label(curve.xs[k])
    if not all(e.has_interval for e in (*ends, inner)):
        return Decision(NOT_REPRODUCED, "one run a point gives no intervals, so no shape can be shown")
    if lowest:
        clear, seen = inner.high < min(e.low for e in ends), inner.value < min(e.value for e in ends)
    else:
        clear, seen = inner.low > max(e.high for e in ends), inner.value > max(e.value for e in ends)
    if not clear:
        why = (
            f"{where} lies beyond both ends but the intervals overlap"
            if seen
            else "no inner point lies beyond both ends"
        )
        return Decision(NOT_REPRODUCED, f"not {shape}: {why}")
    extreme = "lowest" if lowest else "highest"
    if band is not None and (isinstance(curve.xs[k], str) or curve.xs[k] not in band):
        return Decision(
            DIRECTION_ONLY,
            f"{shape}, intervals apart, but its {extreme} point is at {where}, not in {band.text(curve.x_unit)}",
        )
    return Decision(HOLDS, f"{shape}: {where} lies beyond both ends, intervals apart")


def _trend(curve: Curve, band: Band | None, rising: bool) -> Decision:
    first, last = curve.estimates[0], curve.estimates[-1]
    if not (first.has_interval and last.has_interval):
        return Decision(NOT_REPRODUCED, "one run a point gives no intervals, so no trend can be shown")
    span = (
        f"{curve.label(curve.xs[0])} → {curve.label(curve.xs[-1])}: "
        f"{number(first.value, first.unit)} → {number(last.value, last.unit)}"
    )
    if not (last.low > first.high if rising else last.high < first.low):
        return Decision(NOT_REPRODUCED, f"no clear {'rise' if rising else 'fall'} ({span}; the intervals overlap)")
    change = last.value - first.value
    if band is not None and change not in band:
        return Decision(
            DIRECTION_ONLY, f"{span}, but the change {number(change, first.unit)} lies outside {band.text(first.unit)}"
        )
    return Decision(HOLDS, f"{'rises' if rising else 'falls'} beyond the intervals ({span})")


def _flat(curve: Curve) -> Decision:
    estimates = curve.estimates
    if not all(e.has_interval for e in estimates):
        return Decision(NOT_REPRODUCED, "one run a point gives no intervals, so flatness cannot be shown")
    top = max(range(len(estimates)), key=lambda i: estimates[i].low)
    bottom = min(range(len(estimates)), key=lambda i: estimates[i].high)
    if estimates[top].low <= estimates[bottom].high:
        return Decision(HOLDS, f"every interval holds {number(estimates[top].low, estimates[top].unit)}")
    a, b = curve.label(curve.xs[top]), curve.label(curve.xs[bottom])
    return Decision(NOT_REPRODUCED, f"not flat: the interval at {a} lies above the one at {b}")
