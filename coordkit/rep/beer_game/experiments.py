"""The Beer Game experiments of the REP paper (§5, Figure 1), as functions returning tidy DataFrames.

One game is the model itself: ``BeerGame(protocol="a2a", rng=0).run()``; many are a sweep over it:
``sweep(BeerGame, {"protocol": list(PROTOCOLS)}, seeds=20)`` gives one row of ``summary()`` per game.
"""

import pandas as pd

from coordkit import stats
from coordkit.figures import figure
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.rep.beer_game import charts, measures, metrics, stand_in
from coordkit.rep.beer_game.model import PROTOCOLS, BeerGame
from coordkit.sweeps import sweep


def game_rounds(seed: int, llm: LLMClient | None = None, **params) -> pd.DataFrame:
    """One game's per-round, per-stage frame; with ``llm``, with the game's LLM calls and fallbacks as columns."""
    game = BeerGame(rng=seed, llm=llm, **params).run()
    frame = game.frame()
    return frame if llm is None else frame.assign(llm_calls=game.llm_calls, llm_fallbacks=game.llm_fallbacks)


def compare_with_paper(rounds: pd.DataFrame) -> pd.DataFrame:
    """The paper's Figure 1 numbers beside the kit's (mean ± sd over seeds): columns metric, paper, kit."""
    games = metrics.per_game(rounds)
    cost = {p: stats.mean_sd(g["total_cost"]) for p, g in games.groupby("protocol")}
    settle = {p: g["rounds_to_stabilise"] for p, g in games.groupby("protocol")}
    paper = numbers("rep-beer-fig1")
    reduction = 100 * (1 - cost["rep_textual"].mean / cost["a2a"].mean)
    textual_gain = 100 * (1 - cost["rep_textual"].mean / cost["rep_numerical"].mean)
    rows = [
        ("total cost, A2A", paper.text("total_cost", "a2a"), _dollars(cost["a2a"])),
        ("total cost, REP textual", paper.text("total_cost", "rep_textual"), _dollars(cost["rep_textual"])),
        ("total cost, REP numerical", paper.text("total_cost", "rep_numerical"), _dollars(cost["rep_numerical"])),
        ("total cost, base-stock", "(not reported)", _dollars(cost["base_stock"])),
        ("REP cost reduction vs A2A", paper.text("cost_reduction", "rep_textual"), f"{reduction:.1f}%"),
        ("textual vs numerical", paper.text("textual_gain", "rep_textual") + " lower", f"{textual_gain:.1f}% lower"),
        (
            "rounds to stabilise, REP",
            paper.text("rounds_to_stabilise", "rep_textual"),
            _settling(settle["rep_textual"]),
        ),
        ("rounds to stabilise, A2A", paper.text("rounds_to_stabilise", "a2a"), _settling(settle["a2a"])),
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def _dollars(cost: stats.MeanSD) -> str:
    return f"${cost.mean:,.0f} ± {cost.sd:,.0f}" if cost.n > 1 else f"${cost.mean:,.0f} (one game)"


def _settling(rounds: pd.Series) -> str:
    never = int(rounds.isna().sum())
    if never == len(rounds):
        return f"not settled by the last round in any of {never} games"
    text = f"median {rounds.dropna().median():.0f}"
    return text + (f" ({never} of {len(rounds)} games not settled by the last round)" if never else "")


@figure(
    "rep-beer-fig1",
    "REP §5 Fig. 1: Beer Game orders by stage under A2A vs REP, and total cost by protocol",
    chart=charts.figure1,
    compare=compare_with_paper,
    default_seeds=5,
    llm_agents=True,
    stand_in=stand_in.reply,
    measures=measures.MEASURES,
)
def figure1(seeds: int = 5, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame:
    """Figure 1: every protocol over ``seeds`` default games, one row per protocol, seed, round and stage.

    With ``llm``, the players are LLM players (A2A and REP call 1, REP textual call 2; see :class:`BeerGame`).
    """
    return sweep(
        game_rounds,
        {"protocol": list(PROTOCOLS)},
        seeds,
        base_seed=base_seed,
        fixed={"llm": llm},
        desc="Figure 1 games",
    )
