"""The coordkit Altair theme, offline renderers, saving, and the shared chart builders."""

import re
import warnings

import altair as alt
import pandas as pd
import pytest
import vl_convert

from coordkit import viz
from coordkit.chart_checks import ChartWarning, colour_collisions
from coordkit.figures import all_figures


@pytest.fixture(autouse=True)
def restore_altair_state():
    """Leave Altair's global theme and renderer as other tests expect them."""
    theme, renderer = alt.theme.active, alt.renderers.active
    yield
    alt.theme.enable(theme)
    alt.renderers.enable(renderer)


def mimebundle(chart) -> dict:
    bundle = chart._repr_mimebundle_()
    return bundle[0] if isinstance(bundle, tuple) else bundle


@pytest.fixture
def small_chart() -> alt.Chart:
    df = pd.DataFrame(
        {"round": [1, 2, 3, 1, 2, 3], "cost": [4.0, 3.5, 3.0, 5.0, 4.0, 2.5], "role": ["a"] * 3 + ["b"] * 3}
    )
    return viz.lines(df, "round", "cost", color="role", title="Cost")


def test_setup_registers_and_enables_the_theme_and_svg_renderer():
    viz.setup()
    viz.setup()  # idempotent
    assert "coordkit" in alt.theme.names()
    assert alt.theme.active == "coordkit"
    assert alt.renderers.active == "coordkit-checked-svg"  # Altair's svg renderer, after a check of the colours


def test_a_mark_in_a_legends_colour_that_is_not_in_the_legend_is_warned_about(small_chart):
    """The fish stock drawn in the first company's blue beside the companies' legend: warned about when drawn, as
    is a fixed colour given by hand; a legend's own marks, another colour, and a black rule are not."""
    viz.setup()
    fleets = pd.DataFrame({"x": [0, 1, 0, 1], "y": [1, 2, 2, 1], "company": ["a", "a", "b", "b"]})
    boats = viz.lines(fleets, "x", "y", color="company")
    stock = pd.DataFrame({"x": [0, 1], "y": [3, 1]})
    with pytest.warns(ChartWarning, match="#4c78a8, the colour of company = 'a'"):
        (viz.lines(stock, "x", "y") & boats)._repr_mimebundle_()
    orange = viz.lines(stock, "x", "y").mark_line(color="#F58518")
    assert colour_collisions((orange & boats).to_dict()) == [
        "a line mark is drawn in #f58518, the colour of company = 'b' in the legend of company"
    ]
    grey = viz.lines(stock, "x", "y").mark_line(color="#333333")
    rule = alt.Chart(stock).mark_rule().encode(y="y")
    assert colour_collisions((grey & boats & rule).to_dict()) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (grey & boats)._repr_mimebundle_()


def test_theme_shapes_every_chart(small_chart):
    viz.setup()
    config = small_chart.to_dict()["config"]
    assert config["title"]["anchor"] == "start"
    assert config["range"]["category"] == {"scheme": "tableau10"}
    assert config["view"]["continuousWidth"] == viz.WIDTH


def test_unknown_renderer_lists_the_valid_ones():
    with pytest.raises(ValueError, match="svg, png, html-inline"):
        viz.setup("html")


def test_svg_renderer_is_deterministic(small_chart):
    viz.setup("svg")
    first, second = mimebundle(small_chart), mimebundle(small_chart)
    assert list(first) == ["image/svg+xml"]
    assert first["image/svg+xml"].lstrip().startswith("<svg")
    assert first == second


def test_png_renderer_gives_a_png(small_chart):
    viz.setup("png")
    assert mimebundle(small_chart)["image/png"][:8] == b"\x89PNG\r\n\x1a\n"


def test_html_inline_renderer_needs_no_network(small_chart):
    viz.setup("html-inline")
    page = mimebundle(small_chart)["text/html"]
    assert "window.vegaEmbed" in page
    assert "cdn." not in page
    assert "<script src" not in page


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_save_writes_svg_and_png_into_new_folders(tmp_path, small_chart, suffix, magic):
    path = viz.save(small_chart, tmp_path / "figures" / "nested" / f"cost{suffix}")
    assert path.read_bytes().lstrip().startswith(magic)


def test_save_rejects_other_formats(tmp_path, small_chart):
    with pytest.raises(ValueError, match=r"\.svg, \.png"):
        viz.save(small_chart, tmp_path / "cost.html")


SCORES = pd.DataFrame(
    {
        "strategy": ["tit-for-tat", "defect", "random"] * 2,
        "score": [3.0, 1.2, 2.1, 2.8, 1.0, 2.5],
        "low": [2.8, 1.0, 1.8, 2.5, 0.8, 2.2],
        "high": [3.2, 1.4, 2.4, 3.1, 1.2, 2.8],
        "payoffs": ["T=5"] * 3 + ["T=7"] * 3,
    }
)
PAPER_VS_KIT = pd.DataFrame(
    {
        "metric": ["success rate", "rounds", "success rate", "rounds"],
        "value": [0.87, 12.0, 0.853, 13.2],
        "source": ["paper", "paper", "kit", "kit"],
    }
)
LATIN_SQUARE = pd.DataFrame(
    [{"row": row, "col": col, "symbol": "ABC"[(row + col) % 3]} for row in range(3) for col in range(3)]
)


@pytest.mark.parametrize(
    "build",
    [
        lambda: viz.lines(SCORES, "strategy", "score", color="payoffs", y_title="mean", x_title="strategy"),
        lambda: viz.bars(SCORES, "strategy", "score"),
        lambda: viz.bars(SCORES, "strategy", "score", color="payoffs", title="Score", low="low", high="high"),
        lambda: viz.paper_vs_kit(PAPER_VS_KIT, "metric", "value", title="Paper vs kit"),
        lambda: viz.heatmap(LATIN_SQUARE, "col", "row", "symbol", title="A Latin square"),
    ],
    ids=["lines", "bars", "bars-grouped-with-errors", "paper-vs-kit", "heatmap"],
)
def test_builders_render_to_svg(build):
    viz.setup("svg")
    assert "<svg" in mimebundle(build())["image/svg+xml"]


def test_paper_vs_kit_labels_the_values():
    viz.setup("svg")
    svg = mimebundle(viz.paper_vs_kit(PAPER_VS_KIT, "metric", "value"))["image/svg+xml"]
    assert all(f">{label}<" in svg for label in ("0.87", "0.853", "12", "13.2", "paper", "kit"))


def test_error_bars_need_both_columns():
    with pytest.raises(ValueError, match="both"):
        viz.bars(SCORES, "strategy", "score", low="low")


def test_a_table_is_html_that_wraps_and_plain_text_elsewhere():
    frame = pd.DataFrame({"metric": ["cost <A2A>", "rounds"], "kit": ["$838 (one game)", None]})
    shown = viz.table(frame)
    assert repr(shown) == frame.to_string(index=False)
    page = shown._repr_html_()
    assert page.startswith("<table") and page.count("<tr>") == 3 and "cost &lt;A2A&gt;" in page
    assert "white-space:nowrap" not in page and "max-width:100%" in page  # fits the column
    indexed = viz.table(frame.set_index("metric"), index=True)._repr_html_()
    assert ">metric</th>" in indexed and ">rounds</td>" in indexed


# --- every chart fits the notebook column, whatever the fonts ----------------------------------------------------

WIDER = 1.5  # text half again as wide as DejaVu Sans, the widest font the kit expects: every text meets its limit
FONT_SIZES = {  # the font sizes a chart's text takes from the config, with Vega's defaults where the theme has none
    "title": {"fontSize": 15, "subtitleFontSize": 12},
    "axis": {"labelFontSize": 12, "titleFontSize": 13},
    "legend": {"labelFontSize": 12, "titleFontSize": 13},
    "header": {"labelFontSize": 13, "titleFontSize": 13},
    "text": {"fontSize": 11},
}


def drawn(chart: alt.TopLevelMixin, scale: float = 1.0) -> tuple[float, list[str]]:
    """`chart` drawn by vl-convert in DejaVu Sans with every font size from the config times `scale`: its width in
    pixels, and its texts that Vega cut with an ellipsis."""
    viz.setup()
    spec = chart.to_dict()
    config = spec.setdefault("config", {})
    config["font"] = "DejaVu Sans"
    for part, sizes in FONT_SIZES.items():
        config[part] = config.get(part, {}) | {
            key: scale * config.get(part, {}).get(key, size) for key, size in sizes.items()
        }
    svg = vl_convert.vegalite_to_svg(spec)
    width = float(re.search(r'<svg[^>]* width="([\d.]+)"', svg).group(1))
    return width, re.findall(r">([^<>]*…)</t(?:ext|span)>", svg)  # a line of a title is a tspan


def test_the_theme_bounds_every_text():
    config = viz.coordkit_theme()["config"]
    assert config["font"] == viz.FONT and config["font"].split(", ")[:2] == ["Arial", "DejaVu Sans"]
    assert config["padding"] == viz.PADDING
    assert config["title"]["limit"] == viz.TITLE_LIMIT < viz.COLUMN - 2 * viz.PADDING
    assert config["axis"]["labelLimit"] == config["header"]["labelLimit"] == viz.LABEL_LIMIT
    legend = config["legend"]
    assert legend["labelLimit"] == viz.LEGEND_LIMIT and legend["titleLimit"] == viz.LEGEND_COLUMNS * viz.LEGEND_LIMIT
    assert legend["orient"] == "bottom" and legend["columns"] == viz.LEGEND_COLUMNS
    assert "direction: 'vertical'" in legend["layout"]["expr"]  # several legends stack


def test_a_legend_below_a_chart_is_no_wider_than_its_columns():
    words = pd.DataFrame({"x": range(6), "y": range(6), "word": [f"{i} " + "w" * 60 for i in range(6)]})
    width, cut = drawn(viz.lines(words, "x", "y", color="word").properties(width=100), WIDER)
    assert cut  # every label met its limit ...
    assert width <= 100 + 2 * viz.PADDING + viz.LEGEND_COLUMNS * (viz.LEGEND_LIMIT + 30)  # ... and the legend its


def test_a_title_meets_its_limit():
    title = "a title far wider than the column, " * 8
    width, cut = drawn(viz.lines(SCORES, "strategy", "score", title=title))
    assert width <= viz.COLUMN and cut == [cut[0]] and cut[0].startswith("a title")


def _figure(figure_id: str, **params) -> alt.TopLevelMixin:
    figure = all_figures()[figure_id]
    return figure.chart(figure.compute(1, 0, **params))


def _beer(**params) -> pd.DataFrame:
    from coordkit.rep.beer_game.model import BeerGame

    return BeerGame(**params, rng=0).run().frame()


def _movies() -> alt.TopLevelMixin:
    from coordkit.rep.movies.charts import round_view
    from coordkit.rep.movies.model import MovieScheduling

    return round_view(MovieScheduling(population=200, sparsity=0.6, rng=0).run())  # the panel's most agents


def _fast_movies() -> alt.TopLevelMixin:
    from coordkit.rep.movies import fast
    from coordkit.rep.movies.panels import consensus_chart

    return consensus_chart(fast.simulate(0, population=2_000))  # 10,000 takes 4 s


def _fishbanks() -> alt.TopLevelMixin:
    from coordkit.rep.fishbanks.charts import season_view
    from coordkit.rep.fishbanks.model import Fishbanks

    return season_view(Fishbanks(companies=12, seasons=20, rng=0).run())  # the panel's most companies and seasons


def _pressure_trial() -> list:
    from coordkit.pressure.charts import trial
    from coordkit.pressure.model import PressureField

    return trial(PressureField(n=9, empty=30, max_ticks=200, rng=0).run())  # the panel's largest square


def _predictions() -> alt.TopLevelMixin:
    from coordkit.pressure import calibration, charts

    return charts.predictions(calibration.load_predictions())


def _delay_explore() -> list:
    from coordkit.delay.panels import play, show

    return show(play(20, 0, 300, "simplified", 0.99, 0.05, 1.0, -1.0, 1.0, 50))


def _ahoy(protocols: str) -> alt.TopLevelMixin:
    from coordkit.ahoy.panels import play, show

    return show(play(protocols, "pen", 10.0, "urgent", 0, True, 2))[0]


def _agora_weather() -> alt.TopLevelMixin:
    from coordkit.agora import charts, experiments
    from coordkit.agora.model import WeatherDemo

    return charts.weather(experiments.play_both(WeatherDemo, 0, queries=50))


def _agora_workflow() -> alt.TopLevelMixin:
    from coordkit.agora import charts, experiments
    from coordkit.agora.model import AgoraNetwork

    return charts.workflow_graph(experiments.workflow(AgoraNetwork(queries=200, rng=0).run()))


def _beer_chain() -> alt.TopLevelMixin:
    from coordkit.rep.beer_game.charts import chain_at

    return chain_at(_beer(protocol="rep_textual", stages=8), 7)


def _beer_game_view() -> alt.TopLevelMixin:
    from coordkit.rep.beer_game.charts import game_view

    return game_view(_beer(stages=8, rounds=60))


KIT_CHARTS = {  # each notebook's figures, at one seed, and each panel's chart at wide settings
    **{
        figure_id: lambda figure_id=figure_id: _figure(figure_id)
        for figure_id in (
            "rep-beer-fig1",
            "rep-fishbanks-fig2",
            "rep-movies-fig3-sparsity",
            "rep-movies-fig3-scaling",
            "rep-movies-readings",
            "delay-fig3",
            "delay-fig4",
            "delay-asymmetry",
            "pressure-ablation",
            "pressure-table5",
            "pressure-table6",
            "pressure-table7",
            "ahoy-scenarios",
            "agora-weather",
        )
    },
    "agora-network": lambda: _figure("agora-network", queries=100),
    "pressure-calibrated": _predictions,
    "beer-chain": _beer_chain,
    "beer-game-view": _beer_game_view,
    "fishbanks-season": _fishbanks,
    "movies-round": _movies,
    "movies-fast": _fast_movies,
    "pressure-trial": _pressure_trial,
    "delay-explore": _delay_explore,
    "ahoy-purchase-logistics": lambda: _ahoy("purchase+logistics"),
    "ahoy-flexible": lambda: _ahoy("flexible_purchase"),
    "agora-weather-panel": _agora_weather,
    "agora-workflow": _agora_workflow,
}


# figures drawn by a chart checked above through another figure
SAME_CHART_AS = {"pressure-table2": "pressure-table6"}  # both charts.rates, over the same kind of frame


def test_every_figure_is_checked():
    from coordkit.figures import all_figures

    assert set(all_figures()) == set(KIT_CHARTS) & set(all_figures()) | set(SAME_CHART_AS)
    shared = {all_figures()[figure].chart.func for figure in (*SAME_CHART_AS, *SAME_CHART_AS.values())}
    assert len(shared) == 1, shared


# A chart whose width its data bound, not its construction: the trial's curve, beside its square, has a title with
# no limit of its own (tests/test_pressure.py reads it as plain text); its data keep it under 440 px in DejaVu Sans.
BOUND_BY_DATA = {"pressure-trial"}


@pytest.mark.parametrize("name", KIT_CHARTS)
def test_the_kits_charts_fit_the_column_whatever_the_fonts(name):
    """In DejaVu Sans no text is cut and the chart fits the column; with text half again as wide, every text meets its
    limit and the chart still fits: its width is bounded by its construction, not by the fonts it meets."""
    built = KIT_CHARTS[name]()
    for chart in built if isinstance(built, list) else [built]:
        if not isinstance(chart, alt.TopLevelMixin):
            continue  # a panel's table
        width, cut = drawn(chart)
        assert not cut and width <= viz.COLUMN, (width, cut)
        if name not in BOUND_BY_DATA:
            assert drawn(chart, WIDER)[0] <= viz.COLUMN
