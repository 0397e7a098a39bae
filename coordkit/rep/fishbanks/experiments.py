"""The Fishbanks experiments of the REP paper (§6, Figure 2), as functions returning tidy DataFrames.

One game is the model itself: ``Fishbanks(protocol="a2a", rng=0).run()``; many are a sweep over it:
``sweep(Fishbanks, {"protocol": list(PROTOCOLS)}, seeds=20)`` gives one row of ``summary()`` per game.
"""

import numpy as np
import pandas as pd

from coordkit import stats
from coordkit.figures import figure
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.rep.fishbanks import charts, measures, metrics, stand_in
from coordkit.rep.fishbanks.model import PROTOCOL_NAMES as NAMES
from coordkit.rep.fishbanks.model import PROTOCOLS, Fishbanks
from coordkit.rep.fishbanks.policies import THETA_NAMES
from coordkit.sweeps import sweep

FIGURE = "rep-fishbanks-fig2"
REP = "rep_textual"  # the paper's REP: textual sensitivities, synthesised by call 2


def game_seasons(seed: int, llm: LLMClient | None = None, **params) -> pd.DataFrame:
    """One game's per-season, per-company frame; with ``llm``, with the game's LLM calls and fallbacks as columns."""
    game = Fishbanks(rng=seed, llm=llm, **params).run()
    frame = game.frame()
    return frame if llm is None else frame.assign(llm_calls=game.llm_calls, llm_fallbacks=game.llm_fallbacks)


def compare_with_paper(seasons: pd.DataFrame) -> pd.DataFrame:
    """The paper's Figure 2 numbers beside the kit's (mean ± sd, or a 95% interval, over seeds): columns metric,
    paper, kit.

    REP is REP textual, the paper's updater. The paper's gains are ratios; the kit's are differences
    (:func:`.metrics.gains`), which stay finite when A2A empties the sea.
    """
    games = metrics.per_game(seasons)
    by = {p: g for p, g in games.groupby("protocol")}
    gain = metrics.gains(games, REP)
    paper = numbers(FIGURE)
    rows = [
        ("final population, A2A", paper.text("final_population", "a2a"), _fish(by["a2a"])),
        ("final population, REP textual", paper.text("final_population", "rep"), _fish(by[REP])),
        ("final population, REP numerical", "(not reported)", _fish(by["rep_numerical"])),
        (
            "final population, REP textual minus A2A",
            f"{paper.value('final_population', 'rep') - paper.value('final_population', 'a2a'):+,.0f} fish",
            f"{gain['final_population']:+,.0f} fish",
        ),
        (
            "sustainability gain (kit: the final index's difference, points of the initial stock)",
            "+" + paper.text("sustainability_gain", "rep"),
            f"{gain['sustainability']:+.1f} points",
        ),
        (
            "population health gain (kit: the season means' difference, points)",
            "+" + paper.text("health_gain", "rep"),
            f"{gain['health']:+.1f} points",
        ),
        (
            "coordination gain (kit: the season means' difference, points)",
            "+" + paper.text("coordination_gain", "rep"),
            f"{gain['coordination']:+.1f} points",
        ),
        ("profit margin, A2A", paper.text("profit_margin", "a2a"), _percent(by["a2a"]["profit_margin"])),
        ("profit margin, REP textual", paper.text("profit_margin", "rep"), _percent(by[REP]["profit_margin"])),
        *(
            (f"seasons above the threshold, {NAMES[p]}", "(not reported apart)", _seasons(by[p]))
            for p in ("a2a", REP, "rep_numerical")
        ),
        (
            "extra seasons above the threshold, REP textual vs A2A",
            paper.text("extra_seasons_above_threshold", "rep"),
            f"{gain['seasons_above_threshold']:+.1f} seasons",
        ),
        *((f"season of collapse, {NAMES[p]}", "(not reported)", _collapse(by[p])) for p in ("a2a", REP)),
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def _fish(games: pd.DataFrame) -> str:
    final = stats.mean_sd(games["final_population"])
    if final.n == 1:
        return f"{final.mean:,.0f} fish (one game)"
    interval = stats.mean_interval(games["final_population"], bounds=(0, np.inf))
    return f"{final.mean:,.0f} ± {final.sd:,.0f} fish (95% CI {interval.low:,.0f}–{interval.high:,.0f})"


def _seasons(games: pd.DataFrame) -> str:
    above = stats.mean_sd(games["seasons_above_threshold"])
    return f"{above.mean:.1f} ± {above.sd:.1f}" if above.n > 1 else f"{above.mean:.1f} (one game)"


def _collapse(games: pd.DataFrame) -> str:
    collapsed = games["collapse_season"].dropna()
    if collapsed.empty:
        return f"none within the game ({len(games)} games)"
    never = len(games) - len(collapsed)
    text = f"median season {collapsed.median():g} (range {collapsed.min():g}–{collapsed.max():g})"
    return text + (f"; {never} of {len(games)} games never collapse" if never else "")


def _percent(values: pd.Series) -> str:
    share = stats.mean_sd(100 * values.dropna()) if values.notna().any() else None
    if share is None:
        return "(nothing sold)"
    return f"{share.mean:.1f}% ± {share.sd:.1f}" if share.n > 1 else f"{share.mean:.1f}% (one game)"


def dissect(game: Fishbanks | pd.DataFrame, season: int) -> pd.DataFrame:
    """One season, company by company: what it saw, what it decided and signalled, and how its θ moved.

    Columns: company, profile; density_seen (its reading of the stock when it decided, from last season's catch)
    and neighbours_boats (the other companies' average fleet last season: the decisions it heard; NaN in season 1);
    boats and message (its decision and its reasoning or sensitivity text); and for each coordination variable,
    ``<name>_before`` (θ it decided with last season) and ``<name>_after`` (θ after reading the neighbours'
    sensitivities and the consensus, which it decided with this season; NaN for A2A).
    """
    frame = game.frame() if isinstance(game, Fishbanks) else game
    last = int(frame["season"].max())
    if not 1 <= season <= last:
        raise ValueError(f"season={season} was not played: choose a season from 1 to {last}")
    before = frame[frame["season"] == season - 1].set_index("company")
    now = frame[frame["season"] == season].set_index("company")
    table = pd.DataFrame({"profile": now["profile"], "density_seen": before["density_estimate"]})
    fleets = before["boats"]
    heard = (fleets.sum() - fleets) / (len(fleets) - 1) if season > 1 else float("nan")
    table["neighbours_boats"] = heard
    table["boats"], table["message"] = now["boats"], now["message"]
    for name in THETA_NAMES:
        table[f"{name}_before"], table[f"{name}_after"] = before[name], now[name]
    return table.loc[now.index].reset_index()


@figure(
    FIGURE,
    "REP §6 Fig. 2: Fishbanks population and sustainability index by season under A2A vs REP, and the gains",
    chart=charts.figure2,
    compare=compare_with_paper,
    default_seeds=5,
    llm_agents=True,
    stand_in=stand_in.reply,
    measures=measures.MEASURES,
)
def figure2(seeds: int = 5, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame:
    """Figure 2: every protocol over ``seeds`` default games, one row per protocol, seed, season and company.

    With ``llm``, the companies are LLM companies (A2A and REP call 1, REP textual call 2; see :class:`Fishbanks`).
    """
    return sweep(
        game_seasons,
        {"protocol": list(PROTOCOLS)},
        seeds,
        base_seed=base_seed,
        fixed={"llm": llm},
        desc="Figure 2 games",
    )
