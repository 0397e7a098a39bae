"""Fishbanks charts: the stock by season per protocol, the paper's Figure 2 beside the kit's, and one game."""

import altair as alt
import pandas as pd

from coordkit import viz
from coordkit.papers import numbers
from coordkit.rep.fishbanks import metrics
from coordkit.rep.fishbanks.ecology import PEAK_DENSITY
from coordkit.rep.fishbanks.model import PROTOCOL_NAMES, Fishbanks
from coordkit.views import state_view

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
    return viz.layer(line, band, width=width, height=220)  # the line first: the legend shows lines


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
    top = viz.hconcat(population, index + threshold_rule())
    return viz.vconcat(top, outcomes(metrics.per_game(data), source)).resolve_scale(color="independent")


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
    return viz.vconcat(viz.layer(stock, viable, height=170), boats.properties(height=170))


def _collapse(result: dict) -> str:
    season = result["collapse_season"]
    return "no collapse" if pd.isna(season) else f"collapse in season {season:.0f}"


# --- the state view: the fishery as it stands ---------------------------------------------------------------------

SEA_PHASES = ["start", "caught", "grew", "now"]  # the season's waterfall, left to right
SEA_COLOURS = alt.Scale(
    domain=["fish in the sea", "caught this season", "regrown this season"], range=["#4c78a8", "#e45756", "#54a24b"]
)
BOAT_STATES = alt.Scale(
    domain=["in the fleet", "added this season", "laid up this season"], range=["#4c6a92", "#f58518", "#d0d0d0"]
)
SEA_WIDTH, FLEET_WIDTH, CATCH_WIDTH = 180, 170, 100
COMPANY_LABELS = 160  # px: the longest company name, with room to spare
LEVEL_LABELS = 180  # px: the longest name of a level of the sea, with its number
ROW = 20  # px a company's row takes, at least
HEADROOM = 1.04  # the sea's scale reaches a little past its capacity: its label stays inside, the titles in line
INDEPENDENT_COLOURS = alt.Resolve(scale=alt.ScaleResolveMap(color="independent"))


@state_view(Fishbanks)
def fishery_now(game: Fishbanks) -> alt.HConcatChart:
    """The fishery as it stands (the state view, REP §6): the sea's stock against its capacity, the stock at
    which it regrows fastest and the viability threshold, with this season's catch and regrowth as a waterfall;
    each company's boats, one square a boat, those it added or laid up this season marked; and what each company
    landed this season."""
    fleets = _fleets(game)
    return viz.hconcat(
        _sea(game),
        _boats(game, fleets),
        _catches(game, fleets),
        title=viz.title(_fishery_headline(game), viz.TITLE_LIMIT),
        resolve=INDEPENDENT_COLOURS,
    )


def _boats(game: Fishbanks, fleets: dict) -> alt.Chart:
    """A row per company, a square per boat, coloured by whether it was added or laid up this season."""
    boat = alt.X(
        "boat:Q",
        scale=alt.Scale(domain=[0.5, game.max_boats + 0.5], nice=False),
        axis=alt.Axis(values=list(range(1, game.max_boats + 1)), grid=False),
        title="boats, one square each",
    )
    return (
        alt.Chart(fleets["boats"], width=FLEET_WIDTH, height=_height(game), title=viz.title("Boats", FLEET_WIDTH))
        .mark_square(size=_boat_size(game.max_boats))
        .encode(
            x=boat,
            y=alt.Y("company:N", sort=fleets["order"], title=None, axis=alt.Axis(labelLimit=COMPANY_LABELS)),
            color=alt.Color("state:N", scale=BOAT_STATES, title="boats", legend=alt.Legend(columns=1)),
            tooltip=[
                alt.Tooltip("company:N"),
                alt.Tooltip("boats:Q", title="boats this season"),
                alt.Tooltip("state:N"),
            ],
        )
    )


def _catches(game: Fishbanks, fleets: dict) -> alt.Chart:
    """A bar per company, its catch this season, on a scale up to a full fleet's catch at full effect."""
    most = game.max_boats * game.catch_per_boat
    return (
        alt.Chart(fleets["catch"], width=CATCH_WIDTH, height=_height(game), title=viz.title("Catch", CATCH_WIDTH))
        .mark_bar()
        .encode(
            x=alt.X("catch:Q", scale=alt.Scale(domain=[0, most]), title="fish"),
            y=alt.Y("company:N", sort=fleets["order"], axis=None),
            color=alt.Color("what:N", scale=SEA_COLOURS, legend=None),  # the sea's "caught this season"
            tooltip=[
                alt.Tooltip("company:N"),
                alt.Tooltip("catch:Q", format=",.0f"),
                alt.Tooltip("profit:Q", format="$,.0f"),
            ],
        )
    )


def _height(game: Fishbanks) -> int:
    """The view's height: a row for each company, and at least 200 px."""
    return max(200, ROW * game.companies)


def _boat_size(max_boats: int) -> float:
    """A boat's square, in square pixels: at most 14 px a side, and 70% of the room a boat has in its row."""
    side = min(14.0, 0.7 * FLEET_WIDTH / max_boats)
    return side * side


def _fishery_headline(game: Fishbanks) -> str:
    boats = sum(company.boats for company in game.industry)
    profit = sum(company.profit for company in game.industry)
    season = f"season {game.steps} of {game.seasons} · {PROTOCOL_NAMES[game.protocol]}"
    if game.steps == 0:
        return f"{season} · {game.stock:,.0f} fish; the companies hold {boats} boats"
    return (
        f"{season} · {boats} boats caught {game.total_catch:,.0f} fish, {game.regenerated:,.0f} regrew: "
        f"{game.stock:,.0f} left · profit {_dollars(profit)}"
    )


def _dollars(amount: float) -> str:
    return f"−${-amount:,.0f}" if amount < 0 else f"${amount:,.0f}"


def _sea(game: Fishbanks) -> alt.Chart:
    """The season's waterfall: the stock at its start, minus the catch, plus the regrowth, the stock now, on a
    scale fixed just past the capacity, whose dashed levels are the capacity, the stock at which the sea
    regrows fastest and the viability threshold (the index's 0.35 of the initial stock, Fig. 2B)."""
    now, caught, regrown = game.stock, game.total_catch, game.regenerated
    start = now + caught - regrown
    flows = [f"−{caught:,.0f}", f"+{regrown:,.0f}"] if game.steps else ["", ""]  # season 0: nothing has happened
    bars = pd.DataFrame(
        {
            "phase": SEA_PHASES,
            "low": [0.0, start - caught, start - caught, 0.0],
            "high": [start, start, now, now],
            "what": ["fish in the sea", "caught this season", "regrown this season", "fish in the sea"],
            "fish": [f"{start:,.0f}", *flows, f"{now:,.0f}"],
        }
    )
    fish = alt.Scale(domain=[0, HEADROOM * game.capacity], nice=False)
    title = viz.title("The sea", SEA_WIDTH)
    return (
        alt.Chart(bars, width=SEA_WIDTH, height=_height(game), title=title)
        .mark_bar(width=alt.RelativeBandSize(0.8))
        .encode(
            x=alt.X("phase:N", sort=SEA_PHASES, title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("low:Q", scale=fish, title=None, axis=_level_axis(_levels(game))),
            y2=alt.Y2("high:Q"),
            color=alt.Color("what:N", scale=SEA_COLOURS, title="the sea this season", legend=alt.Legend(columns=1)),
            tooltip=[alt.Tooltip("phase:N"), alt.Tooltip("fish:N")],
        )
    )


def _levels(game: Fishbanks) -> dict[float, tuple[str, str]]:
    """The sea's three levels in fish, each with its name and colour: its capacity, the stock at which it
    regrows fastest, and the viability threshold (the sustainability index's threshold times the initial stock,
    Fig. 2B)."""
    return {
        game.capacity: ("capacity", "#888888"),
        PEAK_DENSITY * game.capacity: ("regrows fastest", "#2e7d32"),
        game.viability_threshold * game.initial_stock: ("viability threshold", "#c0392b"),
    }


def _level_axis(levels: dict[float, tuple[str, str]]) -> alt.Axis:
    """A fish axis with a tick at 0 and at each level, labelled with the level's name, and a dashed grid line at
    each level, both in the level's colour."""

    def by_level(what: str, otherwise: str) -> str:
        cases = "".join(
            f"datum.value == {fish!r} ? {what(name, colour, fish)!r} : " for fish, (name, colour) in levels.items()
        )
        return cases + otherwise

    colour = by_level(lambda name, colour, fish: colour, "'black'")
    return alt.Axis(
        values=[0.0, *levels],
        labelExpr=by_level(lambda name, colour, fish: f"{name} {fish:,.0f}", "datum.label"),
        labelColor=alt.ExprRef(colour),
        gridColor=alt.ExprRef(colour),
        gridDash=[5, 3],
        gridWidth=1.5,
        labelLimit=LEVEL_LABELS,
    )


def _fleets(game: Fishbanks) -> dict:
    """One row per boat (a company's boats this season, or last season's where it laid some up), each marked as
    in the fleet, added or laid up this season; one row per company with its catch and profit; the companies in
    the model's order."""
    order = [company.name for company in game.industry]
    boats = [
        (company.name, boat, company.boats, _boat_state(boat, company.boats_before, company.boats))
        for company in game.industry
        for boat in range(1, max(company.boats, company.boats_before) + 1)
    ]
    catches = [(company.name, company.catch, company.profit, "caught this season") for company in game.industry]
    return {
        "order": order,
        "boats": pd.DataFrame(boats, columns=["company", "boat", "boats", "state"]),
        "catch": pd.DataFrame(catches, columns=["company", "catch", "profit", "what"]),
    }


def _boat_state(boat: int, before: int, now: int) -> str:
    if boat > now:
        return "laid up this season"
    return "added this season" if boat > before else "in the fleet"
