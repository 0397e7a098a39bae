"""A class tournament (issue 45): everyone's rules against everyone's, in the manner of the Axelrod library's round
robin::

    result = coordkit.tournament(DelayedDilemma, ["tit_for_tat", "grim_trigger", my_rule], seeds=10, delay_a=[0, 10])
    result.table    # one row per entrant (and setting): its mean score, the score's 95% interval, its rank
    result.chart()  # the same, drawn

A model says how its entrants meet in its ``contest``: :class:`Pairs` for a two-player game (every pair of entrants,
each entrant against itself too, at every seed). A parameter given as a list is played at each of its values. The
matches run through :func:`coordkit.sweep.sweep`, so its engines and progress bar apply: serial by default, since a
rule written in a notebook cannot travel to another process (a rule in an importable module can:
``engine="processes"``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations_with_replacement, product
from typing import Any

import altair as alt
import pandas as pd

from coordkit.contests import Pairs
from coordkit.model import Model
from coordkit.policies import policy_name
from coordkit.stats import mean_interval


@dataclass(frozen=True)
class Tournament:
    """What a tournament found: ``table``, one row per entrant (and setting of the parameters played at several
    values) with its mean ``score``, the score's 95% interval (``low``, ``high``: Student's t over its runs), its
    ``runs`` and ``rank``; ``matches``, one row per run and side (``entrant``, ``opponent``, ``score``, ``seed``)."""

    table: pd.DataFrame
    matches: pd.DataFrame
    measure: str
    settings: tuple[str, ...]

    def chart(self) -> alt.Chart:
        """Each entrant's mean score with its interval, best first (one panel per setting)."""
        settings = self.table[list(self.settings)].astype(str)
        data = self.table.assign(setting=settings.agg(", ".join, axis=1) if self.settings else "")
        order = list(self.table.groupby("entrant")["score"].mean().sort_values(ascending=False).index)
        y = alt.Y("entrant:N", sort=order, title=None)
        base = alt.Chart(data, width=360, height=24 * len(order), title=f"Tournament: {self.measure}")
        rules = base.mark_rule().encode(x=alt.X("low:Q", title=self.measure), x2="high:Q", y=y)
        points = base.mark_point(filled=True, size=60).encode(
            x="score:Q", y=y, tooltip=["entrant", "score", "low", "high", "runs", "rank"]
        )
        layered = rules + points
        return layered.facet(row=alt.Row("setting:N", title=None)) if self.settings else layered

    def _repr_html_(self) -> str:
        return self.table.to_html(index=False)


def tournament(
    model: type[Model],
    entrants: Sequence | Mapping[str, Any],
    seeds: int | Sequence[int] = 10,
    *,
    base_seed: int = 0,
    engine: Any = None,
    progress: bool = True,
    **params: Any,
) -> Tournament:
    """Play ``entrants`` against each other in ``model`` (its ``contest`` says how), at ``seeds`` seeds from
    ``base_seed``, with ``params`` fixed (a list of values is played at each). An entrant is a built-in rule's or a
    registered name, a Policy or a function; a mapping names them (else each goes by its own name)."""
    from coordkit.sweep import sweep

    contest = getattr(model, "contest", None)
    if not isinstance(contest, Pairs):
        raise TypeError(f"{getattr(model, '__name__', model)!r} declares no contest: its entrants cannot meet")
    named = _named(entrants)
    varied = {name: list(values) for name, values in params.items() if isinstance(values, list | tuple)}
    fixed = {name: value for name, value in params.items() if name not in varied}
    settings = [dict(zip(varied, values)) for values in product(*varied.values())]
    checks = ({**fixed, **setting, contest.first: policy} for setting in settings for policy in named.values())
    model.parameters.check_grid(checks, owner=model.__name__, model=model)
    pairs = list(combinations_with_replacement(named, 2))
    runs = sweep(
        play_match,
        {"match": list(range(len(pairs))), **varied},
        seeds,
        base_seed=base_seed,
        fixed={"model": model, "pairs": [(a, b, named[a], named[b]) for a, b in pairs], **fixed},
        engine=engine,
        progress=progress,
        desc=f"{model.__name__} tournament matches",
    )
    matches = pd.concat(
        [
            runs.assign(entrant=runs["first"], opponent=runs["second"], score=runs["score_first"]),
            runs.assign(entrant=runs["second"], opponent=runs["first"], score=runs["score_second"]),
        ],
        ignore_index=True,
    )[[*varied, "seed", "entrant", "opponent", "score"]]
    return Tournament(_table(matches, list(varied)), matches, contest.measure, tuple(varied))


def play_match(*, model: type[Model], pairs: list, match: int, seed: int, **params: Any) -> dict:
    """One run of match ``match`` (of ``pairs``: first's name, second's name, first's policy, second's policy):
    both sides' scores (the run :func:`tournament` sweeps)."""
    first, second, first_policy, second_policy = pairs[match]
    contest = model.contest
    played = model(**params, **{contest.first: first_policy, contest.second: second_policy}, rng=seed).run()
    return {
        "first": first,
        "second": second,
        "score_first": contest.score(played, 0),
        "score_second": contest.score(played, 1),
    }


def _named(entrants: Sequence | Mapping[str, Any]) -> dict[str, Any]:
    named = dict(entrants) if isinstance(entrants, Mapping) else {policy_name(e): e for e in entrants}
    given = len(entrants)
    if len(named) < given:
        raise ValueError("two entrants share a name: pass a mapping {name: entrant} to tell them apart")
    if len(named) < 2:
        raise ValueError(f"a tournament needs two entrants at least, got {given}")
    return named


def _table(matches: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    rows = []
    for keys, group in matches.groupby([*settings, "entrant"], sort=False):
        interval = mean_interval(group["score"])
        labels = dict(zip([*settings, "entrant"], keys if isinstance(keys, tuple) else (keys,)))
        score = group["score"].mean()
        rows.append({**labels, "score": score, "low": interval.low, "high": interval.high, "runs": len(group)})
    table = pd.DataFrame(rows)
    ranks = table.groupby(settings)["score"] if settings else table["score"]
    table["rank"] = ranks.rank(ascending=False, method="min").astype(int)
    return table.sort_values([*settings, "rank"], kind="stable").reset_index(drop=True)
