"""Fishbanks charts: the stock by season per protocol, the paper's Figure 2 beside the kit's, and one game."""

import altair as alt
import pandas as pd

from coordkit import viz
from coordkit.papers import numbers
from coordkit.rep.fishbanks import metrics
from coordkit.rep.fishbanks.model import PROTOCOL_NAMES, Fishbanks

THRESHOLD = Fishbanks.parameters["viability_threshold"].default
CAPACITY = Fishbanks.parameters["capacity"].default
ORDER = list(PROTOCOL_NAMES.values())


def by_season(seasons: pd.DataFrame, value: str, title: str, y_title: str, width: int = 400) -> alt.LayerChart:
    """One line per protocol over seasons, the mean over seeds with a ± sd band (``seasons`` from
    :func:`.metrics.per_season`), ``width`` pixels wide, its title too."""
    table = seasons.groupby(["protocol", "season"], sort=False)[value].agg(["mean", "std"]).reset_index()
    table["protocol"] = table["protocol"].map(PROTOCOL_NAMES)
    spread = table["std"].fillna(0.0)  # one seed: no band
    table["low"], table["high"] = table["mean"] - spread, table["mean"] + spread
    colour = alt.Color("protocol:N", sort=ORDER, title=None)
    line = viz.lines(table, "season", "mean", color="protocol", title=viz.title(title, width), y_title=y_title)
    line = line.encode(color=colour)
    band = (
        alt.Chart(table)
        .mark_area(opacity=0.18)
        .encode(x=alt.X("season:Q"), y=alt.Y("low:Q"), y2=alt.Y2("high:Q"), color=colour)
    )
    return alt.layer(line, band, width=width, height=220)  # the line first: the legend shows lines


def threshold_rule(threshold: float = THRESHOLD) -> alt.Chart:
    """A dashed horizontal rule at the viability threshold (Fig. 2B)."""
    rule = pd.DataFrame({"threshold": [threshold]})
    return alt.Chart(rule).mark_rule(strokeDash=[6, 4], color="#c0392b").encode(y=alt.Y("threshold:Q"))


def outcomes(games: pd.DataFrame, source: str = "kit (rules)") -> alt.FacetChart:
    """Fig. 2C: REP textual's gains over A2A and A2A's profit margin, the paper's beside the kit's. The paper's
    gains are ratios (%); the kit's are differences in points (:func:`.metrics.gains`), which stay finite when A2A
    empties the sea."""
    paper = numbers("rep-fishbanks-fig2")
    gain = metrics.gains(games)
    margin = 100 * games.loc[games["protocol"] == "a2a", "profit_margin"].mean()
    rows = [
        ("sustainability gain", paper.value("sustainability_gain", "rep"), gain["sustainability"]),
        ("health gain", paper.value("health_gain", "rep"), gain["health"]),
        ("coordination gain", paper.value("coordination_gain", "rep"), gain["coordination"]),
        ("A2A profit margin (%)", paper.value("profit_margin", "a2a"), margin),
    ]
    table = pd.DataFrame(
        [(metric, who, value) for metric, ours, kit in rows for who, value in (("paper (LLM)", ours), (source, kit))],
        columns=["metric", "source", "value"],
    ).dropna()
    title = "(C) REP textual vs A2A: gains (paper: %, kit: points)"
    return viz.paper_vs_kit(table, "metric", "value", title=title)


def figure2(data: pd.DataFrame) -> alt.VConcatChart:
    """The paper's Figure 2, redrawn from :func:`~coordkit.rep.fishbanks.experiments.figure2`'s rows: (A) the fish
    population, (B) the sustainability index with the viability threshold, (C) the normalised outcomes."""
    seasons = metrics.per_season(data)
    population = by_season(seasons, "population", "(A) Fish population (mean ± sd)", "fish", width=340)
    index = by_season(seasons, "sustainability_index", "(B) Sustainability index", "index (dashed: threshold)", 340)
    source = "kit (LLM)" if "llm_calls" in data.columns else "kit (rules)"
    top = alt.hconcat(population, index + threshold_rule())
    return alt.vconcat(top, outcomes(metrics.per_game(data), source)).resolve_scale(color="independent")


def season_view(game: Fishbanks | pd.DataFrame) -> alt.VConcatChart:
    """One game at a glance (the notebook panel's chart): the stock with its headline, and boats by company."""
    frame, capacity, threshold = (
        (game.frame(), game.capacity, game.viability_threshold)
        if isinstance(game, Fishbanks)
        else (game, CAPACITY, THRESHOLD)
    )
    seasons = metrics.per_season(frame, capacity, threshold)
    result = metrics.summary(frame, capacity, threshold, seasons=seasons)
    played = len(seasons) - 1
    headline = [  # two lines, narrower than the chart: a panel's chart then keeps its size from one run to the next
        f"Fish stock — final {result['final_population']:,.0f} fish, index {result['final_sustainability_index']:.2f}",
        f"{result['seasons_above_threshold']} of {played} seasons above {threshold:g} ({_collapse(result)}), "
        f"margin {result['profit_margin']:.0%}",
    ]
    stock = viz.lines(seasons[["season", "population"]], "season", "population", title=headline, y_title="fish")
    stock = stock.mark_line(color=viz.NEUTRAL, point=alt.OverlayMarkDef(color=viz.NEUTRAL))  # not a company's colour
    viable = threshold_rule(threshold * seasons["population"].iloc[0])
    fleets = frame[["season", "company", "boats"]]
    boats = viz.lines(fleets, "season", "boats", color="company", title="Boats by company", y_title="boats")
    # in rows of three, so that one company more or less seldom changes the legend's height (and the chart's size)
    fleet = alt.Color("company:N", scale=alt.Scale(scheme="tableau20"), sort=None, legend=alt.Legend(columns=3))
    boats = boats.encode(color=fleet)
    return alt.vconcat(alt.layer(stock, viable, height=170), boats.properties(height=170))


def _collapse(result: dict) -> str:
    season = result["collapse_season"]
    return "no collapse" if pd.isna(season) else f"collapse in season {season:.0f}"
