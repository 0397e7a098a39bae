"""The Beer Game experiments of the REP paper (§5, Figure 1), as functions returning tidy DataFrames."""

from functools import partial

import pandas as pd

from coordkit import figures, stats
from coordkit.llm import BudgetExceeded, LLMClient
from coordkit.paths import paper_numbers
from coordkit.rep.beer_game import charts, metrics, stand_in
from coordkit.rep.beer_game.model import PROTOCOLS, BeerGame, rounds_frame
from coordkit.sweep import sweep


def play(protocol: str = "rep_textual", seed: int = 0, **params) -> BeerGame:
    """One game with the given protocol, seed and model parameters (see :class:`BeerGame`), played out."""
    return BeerGame(protocol=protocol, rng=seed, **params).run()


def game_rounds(protocol: str, seed: int, **params) -> pd.DataFrame:
    """One game's per-round, per-stage frame (the sweepable form of :func:`play`).

    With ``llm=``, the frame also counts the game's LLM calls and fallbacks, and a budget stop is raised
    (:class:`~coordkit.llm.BudgetExceeded`) so that a sweep stops too.
    """
    model = play(protocol, seed, **params)
    if model.stopped:
        raise BudgetExceeded(model.stopped)
    frame = rounds_frame(model)
    if model.llm is not None:
        frame = frame.assign(llm_calls=model.llm_calls, llm_fallbacks=model.llm_fallbacks)
    return frame


def game_summary(protocol: str, seed: int, **params) -> dict:
    """One game's headline numbers: total and per-stage cost, bullwhip ratio, rounds to stabilise, LLM use."""
    model = play(protocol, seed, **params)
    return {
        **metrics.summary(rounds_frame(model), model.step_round),
        "llm_calls": model.llm_calls,
        "llm_fallbacks": model.llm_fallbacks,
    }


def figure1(seeds: int = 5, base_seed: int = 0, progress: bool = False, llm: LLMClient | None = None) -> pd.DataFrame:
    """Figure 1: every protocol over ``seeds`` default games, one row per protocol, seed, round and stage.

    With ``llm``, the players are LLM players (A2A and REP call 1, REP textual call 2; see :class:`BeerGame`).
    """
    run = game_rounds if llm is None else partial(game_rounds, llm=llm)
    return sweep(run, {"protocol": list(PROTOCOLS)}, seeds, base_seed=base_seed, progress=progress, desc="Beer Game")


def compare_with_paper(rounds: pd.DataFrame) -> pd.DataFrame:
    """The paper's Figure 1 numbers beside the kit's (mean ± sd over seeds): columns metric, paper, kit."""
    games = metrics.per_game(rounds)
    cost = {p: stats.mean_sd(g["total_cost"]) for p, g in games.groupby("protocol")}
    settle = {p: g["rounds_to_stabilise"] for p, g in games.groupby("protocol")}
    paper = paper_numbers("rep_beer_game").set_index(["metric", "protocol"])["text"]
    reduction = 100 * (1 - cost["rep_textual"].mean / cost["a2a"].mean)
    textual_gain = 100 * (1 - cost["rep_textual"].mean / cost["rep_numerical"].mean)
    rows = [
        ("total cost, A2A", paper["total_cost", "a2a"], _dollars(cost["a2a"])),
        ("total cost, REP textual", paper["total_cost", "rep_textual"], _dollars(cost["rep_textual"])),
        ("total cost, REP numerical", paper["total_cost", "rep_numerical"], _dollars(cost["rep_numerical"])),
        ("total cost, base-stock", "(not reported)", _dollars(cost["base_stock"])),
        ("REP cost reduction vs A2A", paper["cost_reduction_pct", "rep_textual"], f"{reduction:.1f}%"),
        ("textual vs numerical", paper["textual_gain_pct", "rep_textual"], f"{textual_gain:.1f}% lower"),
        ("rounds to stabilise, REP", paper["rounds_to_stabilise", "rep_textual"], _settling(settle["rep_textual"])),
        ("rounds to stabilise, A2A", paper["rounds_to_stabilise", "a2a"], _settling(settle["a2a"])),
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def _dollars(cost: stats.MeanSD) -> str:
    return f"${cost.mean:,.0f} ± {cost.sd:,.0f}" if cost.n > 1 else f"${cost.mean:,.0f} (one game)"


def _settling(rounds: pd.Series) -> str:
    never = int(rounds.isna().sum())
    settled = rounds.dropna()
    text = f"median {settled.median():.0f}" if len(settled) else "never"
    return text + (f" ({never} of {len(rounds)} games never settle)" if never else "")


FIGURE_1 = figures.register(
    figures.Figure(
        id="rep-beer-fig1",
        description="REP §5 Fig. 1: Beer Game orders by stage under A2A vs REP, and total cost by protocol",
        compute=figure1,
        chart=charts.figure1,
        compare=compare_with_paper,
        stand_in=stand_in.reply,
    )
)
