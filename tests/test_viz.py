"""The coordkit Altair theme, offline renderers, saving, and the shared chart builders."""

import altair as alt
import pandas as pd
import pytest

from coordkit import viz


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
    assert alt.renderers.active == "svg"


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
    assert "white-space:nowrap" not in page and "max-width:1150px" in page  # fits a 1200-pixel column
    indexed = viz.table(frame.set_index("metric"), index=True)._repr_html_()
    assert ">metric</th>" in indexed and ">rounds</td>" in indexed
