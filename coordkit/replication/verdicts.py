"""The decision rules: what a claim's test (a column of ``data/papers/claims.csv``) makes of the kit's estimate.

Every rule gives one of these verdicts and a one-line reason:

- **holds**: the effect is there, its 95% interval clear of the reference, and the kit's number in the claim's
  band where the claim states a size;
- **holds in direction, not in size**: the effect is there, beyond its interval, but the number falls short of
  the band;
- **stronger than the paper**: the effect is there, and the number lies beyond the band, on the claim's side;
- **inconclusive**: the interval is too wide to decide at these runs; the reason says about how many runs would
  decide it (an interval narrows as 1/√runs, so n × (half-width / distance)², the value staying put), or that more
  runs alone may not (the value on the question, or over ``FAR`` times the runs made);
- **contradicted**: the interval excludes what the paper claims (the opposite direction, a threshold missed, a
  band missed, no shape where the paper saw one);
- **needs LLM agents**: the claim is about what LLMs do, which rule-based agents cannot test;
- **tests the kit only**: rule-based agents cannot reach what the claim is about (the claims file's ``kit_only``
  says why); the test is still made, and its verdict is given in the reason (:mod:`coordkit.replication.ledger`).

The tests (a curve is judged at every point unless said otherwise; the first point that decides is named):

- ``greater`` / ``less``: contradicted when an interval lies at or below / at or above ``reference``,
  inconclusive when one reaches both sides, else the effect is there; then its size against ``band`` (a claim
  without a band is a claim of direction only).
- ``at_least`` / ``at_most``: a threshold: met when the whole interval is at or above / at or below
  ``reference``, contradicted when the whole interval misses it, else inconclusive; once met, the size against
  ``band`` when there is one (beyond the band, away from the threshold, is stronger).
- ``within``: holds when the value lies in ``band``; outside it, contradicted when the whole interval misses the
  band, inconclusive when it reaches into it.
- ``equivalent``: holds when the whole interval of a difference lies in ``band``, contradicted when it lies
  wholly outside, else inconclusive.
- ``u_shape`` / ``inverted_u`` (a curve): the shape is there when an inner point's interval lies below / above
  both ends'; contradicted when every inner point's interval lies above / below one end's; else inconclusive.
  Its position holds when every inner point whose interval reaches the extreme's lies in ``band`` (an x range),
  is in direction only when none does, and is inconclusive when some do.
- ``increasing`` / ``decreasing`` (a curve): the trend is there when the last point's interval lies above /
  below the first's, contradicted when it lies below / above, else inconclusive; then last − first against
  ``band``.
- ``flat`` (a curve): holds when the intervals all share a value, contradicted when two lie apart.
- ``llm``: needs LLM agents; nothing is measured.

An estimate from one run has no interval: it can meet or miss a threshold or a band, never show a direction, a
shape or an equivalence (inconclusive).
"""

import math
from dataclasses import dataclass

from coordkit.replication.estimates import SYMBOLS, Curve, Estimate, number

HOLDS = "holds"
DIRECTION_ONLY = "holds in direction, not in size"
STRONGER = "stronger than the paper"
INCONCLUSIVE = "inconclusive"
CONTRADICTED = "contradicted"
NEEDS_LLM = "needs LLM agents"
KIT_ONLY = "tests the kit only"
VERDICTS = (HOLDS, DIRECTION_ONLY, STRONGER, INCONCLUSIVE, CONTRADICTED, NEEDS_LLM, KIT_ONLY)
FAR = 100  # an undecided claim that would need over this many times the runs made is said to be out of reach

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
        "at_least": lambda: _threshold(measured, reference, band, at_least=True),
        "at_most": lambda: _threshold(measured, reference, band, at_least=False),
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


def runs_to_decide(estimate: Estimate, toward: float) -> int | None:
    """About how many runs would keep ``estimate``'s interval off ``toward`` (a reference, a band's edge), its value
    staying put: the half-width facing ``toward`` narrows as 1/√runs. None when the value sits on ``toward``."""
    distance = abs(estimate.value - toward)
    if distance == 0:
        return None
    half = estimate.value - estimate.low if toward < estimate.value else estimate.high - estimate.value
    return max(estimate.n + 1, math.ceil(estimate.n * (half / distance) ** 2))


def runs_to_separate(a: Estimate, b: Estimate) -> int | None:
    """As :func:`runs_to_decide`, for two overlapping intervals: about how many runs each would part them, their
    values staying put. None when the two values are equal."""
    lower, upper = sorted((a, b), key=lambda e: e.value)
    gap = upper.value - lower.value
    if gap == 0:
        return None
    runs = min(a.n, b.n)
    half = (lower.high - lower.value) + (upper.value - upper.low)
    return max(runs + 1, math.ceil(runs * (half / gap) ** 2))


def _inconclusive(why: str, runs: list[int | None], now: int) -> Decision:
    """Inconclusive, saying why and about how many runs would decide every point that is undecided (or that more
    runs alone would hardly do it, beyond ``FAR`` times those made now)."""
    if None in runs or max(runs) > FAR * now:
        return Decision(INCONCLUSIVE, f"{why}: with the value where it is, more runs alone may not decide it")
    return Decision(INCONCLUSIVE, f"{why}: about {max(runs):,} runs would decide it ({now:,} now)")


def _both_sides(undecided: list[tuple[str, Estimate]], reference: float, to: str) -> Decision:
    """Inconclusive: the intervals of the ``undecided`` points reach both sides of ``reference`` (written ``to``)."""
    where, e = undecided[0]
    runs = [runs_to_decide(u, reference) for _, u in undecided]
    return _inconclusive(f"{where}the interval reaches both sides of {to}", runs, e.n)


def _one_run(where: str, what: str) -> Decision:
    return Decision(
        INCONCLUSIVE, f"{where}one run gives no interval, so {what} cannot be shown: more runs would decide it"
    )


def _points(measured: Estimate | Curve) -> list[tuple[str, Estimate]]:
    """(where, estimate) for each point: "" for a single estimate, "at 5 s: " on a curve."""
    if isinstance(measured, Curve):
        return [(f"at {measured.label(x)}: ", estimate) for x, estimate in measured.points]
    return [("", measured)]


def _size(values: list[tuple[str, float]], unit: str, band: Band | None, shown: str, upward: bool) -> Decision:
    """The verdict on an effect ``shown`` to be there: each value against ``band``. Beyond the band on the claim's
    side (above it when ``upward``) is stronger than the paper; short of it, in direction only."""
    if band is None:
        return Decision(HOLDS, shown)
    short = [(where, v) for where, v in values if (v < band.low if upward else v > band.high)]
    beyond = [(where, v) for where, v in values if (v > band.high if upward else v < band.low)]
    if short:
        where, value = short[0]
        return Decision(DIRECTION_ONLY, f"{shown}, but {where}{number(value, unit)} falls short of {band.text(unit)}")
    if beyond:
        where, value = beyond[0]
        return Decision(STRONGER, f"{shown}, and {where}{number(value, unit)} lies beyond {band.text(unit)}")
    return Decision(HOLDS, f"{shown}, and {'every value' if len(values) > 1 else 'the value'} in {band.text(unit)}")


def _direction(measured, reference: float, band: Band | None, above: bool) -> Decision:
    points = _points(measured)
    unit = points[0][1].unit
    to = number(reference, unit)
    for where, e in points:
        if e.has_interval and (e.high <= reference if above else e.low >= reference):
            return Decision(CONTRADICTED, f"{where}the interval lies {'at or below' if above else 'at or above'} {to}")
    for where, e in points:
        if not e.has_interval:
            return _one_run(where, "a direction")
    undecided = [(where, e) for where, e in points if not (e.low > reference if above else e.high < reference)]
    if undecided:
        return _both_sides(undecided, reference, to)
    shown = f"the interval lies {'above' if above else 'below'} {to}"
    return _size([(where, e.value) for where, e in points], unit, band, shown, upward=above)


def _threshold(measured, reference: float, band: Band | None, at_least: bool) -> Decision:
    bound = "at least" if at_least else "at most"
    points = _points(measured)
    unit = points[0][1].unit
    to = number(reference, unit)
    undecided = []
    for where, e in points:
        low, high = (e.low, e.high) if e.has_interval else (e.value, e.value)
        if high < reference if at_least else low > reference:
            if low == high:
                return Decision(CONTRADICTED, f"{where}the value is {number(e.value, unit)}, not {bound} {to}")
            side = "below" if at_least else "above"
            return Decision(CONTRADICTED, f"{where}the whole interval lies {side} {to} (the claim: {bound} {to})")
        if not (low >= reference if at_least else high <= reference):
            undecided.append((where, e))
    if undecided:
        return _both_sides(undecided, reference, to)
    shown = f"everything measured is {bound} {to}"
    return _size([(where, e.value) for where, e in points], unit, band, shown, upward=at_least)


def _within(measured, band: Band) -> Decision:
    points = _points(measured)
    unit = points[0][1].unit
    outside = [(where, e) for where, e in points if e.value not in band]
    reaching = [(w, e) for w, e in outside if e.has_interval and e.low <= band.high and e.high >= band.low]
    missing = [(where, e) for where, e in outside if (where, e) not in reaching]
    if missing:
        where, e = missing[0]
        whole = ", and so does its whole interval" if e.has_interval and e.low != e.high else ""
        return Decision(CONTRADICTED, f"{where}{number(e.value, unit)} lies outside {band.text(unit)}{whole}")
    if reaching:
        where, e = reaching[0]
        runs = [runs_to_decide(r, band.low if r.value < band.low else band.high) for _, r in reaching]
        why = f"{where}{number(e.value, unit)} lies outside {band.text(unit)}, but its interval reaches into it"
        return _inconclusive(why, runs, e.n)
    return Decision(HOLDS, f"{'every value lies' if len(points) > 1 else 'the value lies'} in {band.text(unit)}")


def _equivalent(measured: Estimate, band: Band) -> Decision:
    if not measured.has_interval:
        return _one_run("", "equivalence")
    text = band.text(measured.unit)
    if measured.low in band and measured.high in band:
        return Decision(HOLDS, f"the whole interval lies in {text}")
    if measured.high < band.low or measured.low > band.high:
        return Decision(CONTRADICTED, f"the whole interval lies outside {text}")
    crossed = [edge for edge in (band.low, band.high) if measured.low < edge < measured.high]
    if measured.value in band:
        runs = [runs_to_decide(measured, edge) for edge in crossed]
        return _inconclusive(f"the value lies in {text}, but the interval reaches beyond it", runs, measured.n)
    nearest = min(crossed, key=lambda edge: abs(edge - measured.value))
    why = f"the value lies outside {text}, but the interval reaches into it"
    return _inconclusive(why, [runs_to_decide(measured, nearest)], measured.n)


def _extreme(curve: Curve, band: Band | None, lowest: bool) -> Decision:
    estimates = curve.estimates
    if len(estimates) < 3:
        raise ValueError("a U needs a curve of three points at least")
    shape, word = ("a U", "lowest") if lowest else ("an inverted U", "highest")
    if not all(e.has_interval for e in estimates):
        return _one_run("", "a shape")
    first, last = estimates[0], estimates[-1]
    inner = range(1, len(estimates) - 1)
    pick = min if lowest else max

    def beyond_both(e: Estimate) -> bool:
        return e.high < min(first.low, last.low) if lowest else e.low > max(first.high, last.high)

    def ruled_out(e: Estimate) -> bool:  # wholly on the wrong side of one end
        return e.low > min(first.high, last.high) if lowest else e.high < max(first.low, last.low)

    shown = [i for i in inner if beyond_both(estimates[i])]
    if not shown:
        if all(ruled_out(estimates[i]) for i in inner):
            side = "above" if lowest else "below"
            return Decision(CONTRADICTED, f"not {shape}: every inner point's interval lies {side} an end's")
        k = pick(inner, key=lambda i: estimates[i].value)
        nearer_end = pick((first, last), key=lambda e: e.value)
        if estimates[k].value < nearer_end.value if lowest else estimates[k].value > nearer_end.value:
            why = f"not yet {shape}: {curve.label(curve.xs[k])} lies beyond both ends but the intervals overlap"
            return _inconclusive(why, [runs_to_separate(estimates[k], nearer_end)], estimates[k].n)
        return _inconclusive(f"not yet {shape}: no inner point lies beyond both ends", [None], estimates[k].n)
    k = pick(shown, key=lambda i: estimates[i].value)
    where = curve.label(curve.xs[k])
    if band is None:
        return Decision(HOLDS, f"{shape}: {where} lies beyond both ends, intervals apart")
    reach = [
        i for i in inner if (estimates[i].low <= estimates[k].high if lowest else estimates[i].high >= estimates[k].low)
    ]
    in_band = [i for i in reach if not isinstance(curve.xs[i], str) and curve.xs[i] in band]
    text = band.text(curve.x_unit)
    if len(in_band) == len(reach):
        return Decision(HOLDS, f"{shape}, intervals apart, its {word} point at {where}, in {text}")
    if not in_band:
        return Decision(DIRECTION_ONLY, f"{shape}, intervals apart, but its {word} point is at {where}, not in {text}")
    rival = min(
        (i for i in reach if (i in in_band) != (k in in_band)),
        key=lambda i: abs(estimates[i].value - estimates[k].value),
    )
    why = (
        f"{shape}, intervals apart, but where its {word} point lies is undecided: {where} and "
        f"{curve.label(curve.xs[rival])} overlap, one in {text} and one not"
    )
    return _inconclusive(why, [runs_to_separate(estimates[k], estimates[rival])], estimates[k].n)


def _trend(curve: Curve, band: Band | None, rising: bool) -> Decision:
    first, last = curve.estimates[0], curve.estimates[-1]
    if not (first.has_interval and last.has_interval):
        return _one_run("", "a trend")
    span = (
        f"{curve.label(curve.xs[0])} → {curve.label(curve.xs[-1])}: "
        f"{number(first.value, first.unit)} → {number(last.value, last.unit)}"
    )
    if last.low > first.high if rising else last.high < first.low:
        shown = f"{'rises' if rising else 'falls'} beyond the intervals ({span})"
        change = [("the change ", last.value - first.value)]
        return _size(change, first.unit, band, shown, upward=rising)
    if last.high < first.low if rising else last.low > first.high:
        return Decision(CONTRADICTED, f"{'falls' if rising else 'rises'} instead ({span}, intervals apart)")
    why = f"no clear {'rise' if rising else 'fall'} ({span}; the intervals overlap)"
    return _inconclusive(why, [runs_to_separate(first, last)], min(first.n, last.n))


def _flat(curve: Curve) -> Decision:
    estimates = curve.estimates
    if not all(e.has_interval for e in estimates):
        return _one_run("", "flatness")
    top = max(range(len(estimates)), key=lambda i: estimates[i].low)
    bottom = min(range(len(estimates)), key=lambda i: estimates[i].high)
    if estimates[top].low <= estimates[bottom].high:
        return Decision(HOLDS, f"every interval holds {number(estimates[top].low, estimates[top].unit)}")
    a, b = curve.label(curve.xs[top]), curve.label(curve.xs[bottom])
    return Decision(CONTRADICTED, f"not flat: the interval at {a} lies above the one at {b}")
