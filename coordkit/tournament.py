"""A class tournament (issue 45): everyone's rules against everyone's, in the manner of the Axelrod library's round
robin::

    result = coordkit.tournament(DelayedDilemma, ["tit_for_tat", "grim_trigger", my_rule], seeds=10, delay_a=[0, 10])
    result.table    # one row per entrant (and setting): its mean score, the score's 95% interval, its rank
    result.chart()  # the same, drawn

A model says how its entrants meet in its ``contest`` (:mod:`coordkit.contests`): :class:`~coordkit.contests.Pairs`
for a two-player game (every pair of entrants, each entrant against itself too, at every seed);
:class:`~coordkit.contests.Population` for a model whose agents all take one policy (each entrant as the whole
population, then every two mixed, in the table's ``field`` column). A parameter given as a list is played at each of
its values. The matches run through :func:`coordkit.sweeps.sweep`, so its engines and progress bar apply: serial by
default, since a rule written in a notebook cannot travel to another process (a rule in an importable module can:
``engine="processes"``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import altair as alt
import pandas as pd

from coordkit.contests import Contest
from coordkit.model import Model
from coordkit.policies import policy_name
from coordkit.stats import mean_interval


@dataclass(frozen=True)
class Tournament:
    """What a tournament found: ``table``, one row per entrant (and field, and setting of the parameters played at
    several values) with its mean ``score``, the score's 95% interval (``low``, ``high``: Student's t over its runs),
    its ``runs`` and ``rank``; ``matches``, one row per run and entrant (``entrant``, ``opponent``, ``score``, ``seed``:
    an entrant's score in a run is the mean over the seats it held)."""

    table: pd.DataFrame
    matches: pd.DataFrame
    measure: str
    settings: tuple[str, ...]
    lower_is_better: bool = False

    def chart(self) -> alt.Chart:
        """Each entrant's mean score with its interval, best first (one panel per field and setting)."""
        panels = [column for column in ("field", *self.settings) if column in self.table]
        data = self.table.assign(panel=self.table[panels].astype(str).agg(", ".join, axis=1) if panels else "")
        means = self.table.groupby("entrant")["score"].mean()
        order = list(means.sort_values(ascending=self.lower_is_better).index)
        y = alt.Y("entrant:N", sort=order, title=None)
        title = f"Tournament: {self.measure} ({'lower' if self.lower_is_better else 'higher'} is better)"
        base = alt.Chart(data, width=360, height=24 * len(order))
        rules = base.mark_rule().encode(x=alt.X("low:Q", title=self.measure), x2=alt.X2("high"), y=y)
        points = base.mark_point(filled=True, size=60).encode(
            x=alt.X("score:Q"),
            y=y,
            tooltip=[alt.Tooltip(column) for column in ("entrant", "score", "low", "high", "runs", "rank")],
        )
        layered = rules + points
        chart = layered.facet(row=alt.Row("panel:N", title=None)) if panels else layered
        return chart.properties(title=title)

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
    from coordkit.sweeps import seeds_to_run, sweep  # (the seeds as a sweep derives them, checked before any run)

    contest = getattr(model, "contest", None)
    if not isinstance(contest, Contest):
        raise TypeError(f"{getattr(model, '__name__', model)!r} declares no contest: its entrants cannot meet")
    named = _named(entrants)
    varied = {name: list(values) for name, values in params.items() if isinstance(values, list | tuple)}
    fixed = {name: value for name, value in params.items() if name not in varied}
    settings = [dict(zip(varied, values)) for values in product(*varied.values())]
    for setting in settings:  # every entrant in every setting, before any match is played
        seats = contest.seats({**fixed, **setting}, model)
        checks = ({**fixed, **setting, **contest.fielding([policy] * seats)} for policy in named.values())
        model.parameters.check_grid(checks, owner=model.__name__, model=model)
    lineups = contest.lineups(list(named))
    runs = sweep(
        play_matches,
        {"match": list(range(len(lineups))), **varied},
        [base_seed],
        fixed={"model": model, "lineups": lineups, "entrants": named, "seeds": seeds_to_run(seeds, base_seed), **fixed},
        engine=engine,
        progress=progress,
        desc=f"{model.__name__} tournament lineups",
    )
    fields = ["field"] if any(field for field, _ in lineups) else []
    columns = [*varied, *fields, "seed", "entrant", "opponent", "score"]
    matches = runs[columns].reset_index(drop=True)
    table = _table(matches, [*fields, *varied], contest.lower_is_better)
    return Tournament(table, matches, contest.measure, tuple(varied), contest.lower_is_better)


def play_matches(
    *, model: type[Model], lineups: list, entrants: dict, match: int, seeds: list[int], seed: int, **params: Any
) -> pd.DataFrame:
    """Lineup ``match`` (of ``lineups``: a field and the entrants' names, seat by seat, repeated) played once at each
    of ``seeds``: each entrant's score in each run, the mean over its seats (what :func:`tournament` sweeps, one
    task per lineup and setting rather than per run, whose bookkeeping cost as much as the run). ``seed`` is the
    tournament's base seed, from which ``seeds`` were derived."""
    field, lineup = lineups[match]
    contest = model.contest
    seated = [lineup[seat % len(lineup)] for seat in range(contest.seats(params, model))]
    names = list(dict.fromkeys(lineup))
    rows = []
    for run_seed in seeds:
        played = model(**params, **contest.fielding([entrants[name] for name in seated]), rng=run_seed).run()
        scores = pd.Series(contest.scores(played), index=seated)
        for name in names:
            opponent = " & ".join(other for other in names if other != name) or name
            rows.append((run_seed, field, name, opponent, scores[name].mean()))
    return pd.DataFrame(rows, columns=["seed", "field", "entrant", "opponent", "score"])


def _named(entrants: Sequence | Mapping[str, Any]) -> dict[str, Any]:
    named = dict(entrants) if isinstance(entrants, Mapping) else {policy_name(e): e for e in entrants}
    given = len(entrants)
    if len(named) < given:
        raise ValueError("two entrants share a name: pass a mapping {name: entrant} to tell them apart")
    if len(named) < 2:
        raise ValueError(f"a tournament needs two entrants at least, got {given}")
    return named


def _table(matches: pd.DataFrame, groups: list[str], lower_is_better: bool) -> pd.DataFrame:
    rows = []
    for keys, group in matches.groupby([*groups, "entrant"], sort=False):
        interval = mean_interval(group["score"])
        labels = dict(zip([*groups, "entrant"], keys if isinstance(keys, tuple) else (keys,)))
        score = group["score"].mean()
        rows.append({**labels, "score": score, "low": interval.low, "high": interval.high, "runs": len(group)})
    table = pd.DataFrame(rows)
    scores = table.assign(score=table["score"].round(9))  # equal scores summed in another order rank equal
    ranks = scores.groupby(groups)["score"] if groups else scores["score"]
    table["rank"] = ranks.rank(ascending=lower_is_better, method="min").astype(int)
    first_seen = {column: {value: i for i, value in enumerate(matches[column].unique())} for column in groups}
    order = table.sort_values(
        [*groups, "rank"], key=lambda c: c.map(first_seen.get(c.name, {})).fillna(c), kind="stable"
    )
    return order.reset_index(drop=True)
