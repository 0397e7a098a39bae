"""The contract every present and future model family passes (CONTRIBUTING.md).

Parametrised over the registries, so a new family is tested as soon as its ``experiments.py`` exists:

- every family has the guide's files;
- every figure computes at 1 and at 2 seeds, its comparison has exactly the columns metric, paper, kit, its chart
  renders, its CSV is byte-identical across two processes, and, if it has LLM agents, it plays them through a
  client;
- every model refuses one bad value of each kind for every declared parameter with a clear error, takes -0.0 as
  0.0, takes a tiny or subnormal number or refuses it clearly, refuses a seed that is not one, is refused
  ``--PARAMETER -inf`` on the command line by the option's name, is deterministic, and has
  ``run``/``frame``/``summary``, and a state view for its player that moves step by step and updates in place;
- the papers' published numbers follow one schema and belong to registered figures.

The policies' contract is in ``test_policy_contract.py``.
"""

import dataclasses
import importlib
import inspect
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert
from altair.utils import schemapi

from coordkit import cli, figure_cache, figures, papers, views
from coordkit.families import families
from coordkit.figures import COMPARISON
from coordkit.live_chart import spec_of
from coordkit.llm import ScriptedClient
from coordkit.model import model_id
from coordkit.model import registered as registered_models
from coordkit.parameters import Choice, Flag, Instance, Integer, ParameterError, Real
from coordkit.replication.estimates import Curve, Estimate

ROOT = Path(__file__).resolve().parent.parent
TINY = (5e-324, 1e-310, 1e-300)  # the smallest subnormal, a subnormal, and a tiny normal number
GUIDE_FILES = ("model.py", "agents.py", "policies.py", "experiments.py", "charts.py", "panels.py")
LLM_FILES = ("llm_policies.py", "stand_in.py")


def without_compute(figure):
    """``figure`` with a compute that fails: what it gives must come from the cache."""

    def compute(*_):
        raise AssertionError(f"{figure.id} was computed again instead of read from the figure cache")

    return dataclasses.replace(figure, compute=compute)


def _importable() -> tuple[list[str], dict[str, str]]:
    """The families that import, and the error of each that does not (reported by its own test)."""
    good, broken = [], {}
    for family in families():
        try:
            importlib.import_module(f"{family}.experiments")
            good.append(family)
        except Exception as error:  # noqa: BLE001 — a broken family must fail its own test, not the collection
            broken[family] = f"{type(error).__name__}: {error}"
    return good, broken


GOOD, BROKEN = _importable()
FIGURES = {fid: f for fid, f in figures.registered().items() if f.compute.__module__.startswith(tuple(GOOD))}
MODELS = {name: m for name, m in registered_models().items() if m.__module__.startswith("coordkit.")}


@pytest.mark.parametrize("family", families())
def test_the_family_imports(family):
    assert family not in BROKEN, BROKEN.get(family)


@pytest.mark.parametrize("family", families())
def test_the_family_has_the_guides_files(family):
    folder = ROOT.joinpath(*family.split("."))
    missing = [name for name in GUIDE_FILES if not (folder / name).exists()]
    assert not missing, f"{family} lacks {missing} (CONTRIBUTING.md: the anatomy of a model family)"
    has_llm = any(f.llm_agents for f in FIGURES.values() if f.compute.__module__.startswith(family))
    if has_llm:
        missing = [name for name in LLM_FILES if not (folder / name).exists()]
        assert not missing, f"{family} has LLM agents but lacks {missing}"


def test_there_are_ten_figures_or_more():
    assert len(FIGURES) >= 10, sorted(FIGURES)


# --- figures ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=sorted(FIGURES))
def figure(request):
    return FIGURES[request.param]


@pytest.mark.parametrize("seeds", [1, 2])
def test_a_figure_computes_compares_and_charts(figure, seeds, tmp_path, monkeypatch):
    data = figure.compute(seeds, 0, **figure.small)
    assert isinstance(data, pd.DataFrame) and len(data) > 0
    monkeypatch.setenv("COORDKIT_CACHE", str(tmp_path))  # the figure cache keeps it and gives it back exactly
    kept = dataclasses.replace(figure, compute=lambda *_: data.copy(deep=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error", figure_cache.FigureCacheWarning)  # "not kept" would fail here
        figure_cache.computed(kept, seeds, 0)
        assert figure_cache.difference(figure_cache.computed(without_compute(kept), seeds, 0), data) is None
    comparison = figure.compare(data)
    assert list(comparison.columns) == COMPARISON
    assert len(comparison) > 0 and comparison["metric"].map(bool).all()
    svg = vl_convert.vegalite_to_svg(figure.chart(data).to_dict())
    assert svg.startswith("<svg") and "NaN" not in svg


@pytest.mark.parametrize("figure_id", sorted(f.id for f in FIGURES.values() if f.measures))
def test_a_figures_measures_give_an_estimate_or_a_curve_from_its_data(figure_id):
    """What the claims ledger reads (coordkit.replication): every measure a figure declares, on two small runs."""
    figure = FIGURES[figure_id]
    data = figure.compute(2, 0, **figure.small)
    for name, measure in figure.measures.items():
        measured = measure(data)
        assert isinstance(measured, Estimate | Curve), (name, measured)
        assert measured.text(), name


@pytest.mark.parametrize("figure_id", sorted(f.id for f in FIGURES.values() if not f.llm_agents))
def test_a_figure_without_llm_agents_refuses_a_client(figure_id):
    with pytest.raises(ValueError, match="no LLM agents"):
        FIGURES[figure_id].compute(1, 0, llm=ScriptedClient(["C"], repeat=True), **FIGURES[figure_id].small)


@pytest.mark.parametrize("figure_id", sorted(f.id for f in FIGURES.values() if f.llm_agents))
def test_a_figure_with_llm_agents_plays_them_through_the_client(figure_id):
    figure = FIGURES[figure_id]
    client = ScriptedClient(figure.stand_in or (lambda request: "no idea"))
    data = figure.compute(1, 0, llm=client, **figure.small)
    assert len(client.requests) > 0 and len(data) > 0
    assert list(figure.compare(data).columns) == COMPARISON


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    """Every figure's CSV at 1 seed (its small size), written by two separate Python processes with different hash
    seeds."""
    script = (
        "import importlib, sys; from coordkit import figures\n"
        "for spec in sys.argv[2:]:\n"
        "    module, figure_id = spec.split(':')\n"
        "    importlib.import_module(module)\n"
        "    figure = figures.registered()[figure_id]\n"
        "    figure.compute(1, 0, **figure.small).to_csv(f'{sys.argv[1]}/{figure_id}.csv', index=False)\n"
    )
    specs = [f"{f.compute.__module__}:{f.id}" for f in FIGURES.values()]
    outs = [tmp_path_factory.mktemp(f"process{k}") for k in (1, 2)]
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(out), *specs],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(k)},
        )
        for k, out in enumerate(outs)
    ]
    for run in runs:
        assert run.wait(timeout=600) == 0, run.stderr.read()
    return outs


def test_a_figures_csv_is_byte_identical_across_two_processes(figure, two_processes):
    first, second = (out / f"{figure.id}.csv" for out in two_processes)
    assert first.read_bytes() == second.read_bytes()


# --- models -----------------------------------------------------------------------------------------------------


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return MODELS[request.param]


def bad_values(param) -> list:
    """One bad value of each kind the parameter can be given wrongly (None too, where it means nothing)."""
    none_allowed = param.optional or (isinstance(param, Choice) and None in param.options)
    return _wrong_kinds(param) + ([] if none_allowed else [None])


def _wrong_kinds(param) -> list:
    match param:
        case Integer():
            return [math.nan, math.inf, param.low - 1, param.high + 1, param.low + 0.5, str(param.default), True]
        case Real():
            return [math.nan, math.inf, param.low - 1, param.high + 1, "1", True]
        case Flag():
            return [1, "yes"]
        case Choice():
            return ["no such choice", 3.5]
        case Instance():
            return [object()]
    raise AssertionError(f"no bad values known for {type(param).__name__}")


def test_a_model_refuses_every_bad_value_with_a_clear_error(model):
    for param in model.parameters:
        for value in bad_values(param):
            with pytest.raises(ParameterError) as error:
                model(**{param.name: value})
            message = str(error.value)
            assert param.name in message and repr(value) in message, message
            assert f"{param.name} takes " in message, message


def test_a_model_refuses_an_unknown_parameter(model):
    with pytest.raises(ParameterError, match="has no parameter"):
        model(no_such_parameter=1)


def _reals(model) -> list[Real]:
    return [param for param in model.parameters if isinstance(param, Real)]


def _played_briefly(model, **params) -> str:
    """The frame, as CSV, of the model at its small size with ``params``, seeded and stepped three steps at most:
    enough to meet an edge value's arithmetic, short enough for every parameter of every model."""
    played = model(**{**model.small, **params}, rng=7)
    for _ in range(3):
        if played.running:
            played.step()
    return played.frame().to_csv(index=False)


def test_a_model_takes_minus_zero_as_zero(model):
    """-0.0 (the command line's "-0") is 0.0: the same run, byte for byte, where 0 is allowed (numpy refuses a
    spread of -0.0), and the same refusal where it is not."""
    for param in _reals(model):
        try:
            zero = _played_briefly(model, **{param.name: 0.0})
        except ParameterError as refusal:
            with pytest.raises(ParameterError) as error:
                model(**{**model.small, param.name: -0.0})
            assert str(error.value).replace("-0.0", "0.0") == str(refusal), error.value
            continue
        assert _played_briefly(model, **{param.name: -0.0}) == zero, param.name


@pytest.mark.parametrize("value", TINY)
def test_a_model_plays_a_tiny_number_or_refuses_it_clearly(model, value):
    """A subnormal or tiny value of any number is refused by name, or plays: no quotient overflows into a crash
    (a catch per boat of 1e-310 fish once made Fishbanks convert an infinite fleet to an int)."""
    for param in _reals(model):
        try:
            _played_briefly(model, **{param.name: value})
        except ParameterError as error:
            assert f"{param.name}={value!r}" in str(error), error


@pytest.mark.parametrize("rng", [-1, 1.5, "3", True])
def test_a_model_refuses_a_seed_that_is_not_one(model, rng):
    with pytest.raises(ParameterError) as error:
        model(**model.small, rng=rng)
    assert f"rng={rng!r} is not a seed: rng takes a non-negative integer" in str(error.value)


def test_the_command_line_refuses_minus_infinity_for_every_number_by_its_option(model, tmp_path, capsys):
    """``--PARAMETER -inf`` reaches the parameter's check (argparse alone reads "-inf" as an option and says only
    "expected one argument")."""
    numbers = [param for param in model.parameters if isinstance(param, Integer | Real)]
    for param in numbers:
        option = f"--{param.name.replace('_', '-')}"
        assert cli.main(["run", model_id(model), option, "-inf", "--out", str(tmp_path)]) == 2, option
        error = capsys.readouterr().err
        assert f"argument {option}: {param.name}=-inf is not " in error and f"{param.name} takes " in error, error
    assert not list(tmp_path.iterdir())


def test_a_model_runs_and_gives_its_frame_and_summary(model):
    played = model(**model.small, rng=3)
    assert played.run() is played
    frame = played.frame()
    step = frame.columns[0]
    assert frame[step].iloc[0] == 0 and frame[step].iloc[-1] == played.steps, (step, played.steps)
    assert frame[step].is_monotonic_increasing
    summary = played.summary()
    assert isinstance(summary, dict) and summary
    assert all(np.isscalar(value) or value is None for value in summary.values()), summary
    assert summary.get("llm_calls", 0) == played.llm_calls == 0 and played.llm_fallbacks == 0  # rule-based agents


LLM_MODELS = sorted(name for name, m in MODELS.items() if "llm" in m.parameters.names)


@pytest.mark.parametrize("name", LLM_MODELS)
def test_a_models_llm_calls_are_the_requests_its_client_received(name):
    """``llm_calls`` means one thing everywhere: requests sent to an LLM client (several per decision where a
    dialogue or a tool round takes them), in the model and in its summary. Played through the family's stand-in."""
    model = MODELS[name]
    family = model.__module__.rsplit(".", 1)[0]
    client = ScriptedClient(importlib.import_module(f"{family}.stand_in").reply)
    llm_players = {p.name: "llm" for p in model.parameters if isinstance(p, Choice) and "llm" in p.options}
    played = model(**{**model.small, **llm_players}, llm=client, rng=3).run()
    assert played.llm_calls == len(client.requests) > 0
    assert played.summary().get("llm_calls", played.llm_calls) == played.llm_calls


def test_a_model_is_deterministic(model):
    first, second = (model(**model.small, rng=11).run() for _ in range(2))
    pd.testing.assert_frame_equal(first.frame(), second.frame())
    assert json.dumps(first.summary(), default=str) == json.dumps(second.summary(), default=str)


def test_a_models_signature_and_docstring_come_from_its_declaration(model):
    signature = inspect.signature(model)
    assert list(signature.parameters) == [*model.parameters.names, "rng"]
    assert all(model.parameters[p].doc for p in model.parameters.names)
    assert "Parameters (declared" in model.__doc__


# --- the papers' numbers ----------------------------------------------------------------------------------------


def test_the_papers_numbers_follow_one_schema_and_belong_to_figures():
    table = papers.published()
    assert set(table["figure"]) <= set(figures.registered()), sorted(set(table["figure"]) - set(FIGURES))
    assert (table["source"].str.len() > 0).all() and (table["metric"].str.len() > 0).all()
    keys = table[["figure", "metric", "condition"]]
    assert not keys.duplicated().any(), keys[keys.duplicated()]


VIEW_KEYS = ("mark", "layer", "hconcat", "vconcat", "concat", "facet", "repeat", "spec")
VIEW_STEPS = 6


def spec_shape(spec: dict) -> str:
    """What must stay the same for the page to update a live chart in place (coordkit/live_chart.js, ``prepare``): the
    spec without its datasets' values and names, the titles of its views and the size of its top view."""
    names = {name: f"ck-data-{i}" for i, name in enumerate(spec.get("datasets", {}))}
    text = json.dumps(spec)
    for name, position in names.items():
        text = text.replace(json.dumps(name), json.dumps(position))
    shape = json.loads(text)
    shape["datasets"] = list(shape.get("datasets", {}))
    for key in ("width", "height"):
        if isinstance(shape.get(key), (int, float)):
            shape[key] = "in place"

    def untitled(node, top=False):
        if isinstance(node, list):
            return [untitled(item) for item in node]
        if not isinstance(node, dict):
            return node
        is_view = top or any(key in node for key in VIEW_KEYS)
        return {
            key: value if key in ("datasets", "encoding", "data") else untitled(value)
            for key, value in node.items()
            if not (is_view and key == "title")
        }

    return json.dumps(untitled(shape, top=True), sort_keys=True)


def test_a_model_has_a_state_view_that_moves_and_updates_in_place(model):
    """Every model has a state view (coordkit/views.py) for its player: drawn at step 0 and at every step after, it
    changes its data as the model moves, and nothing the page could not update in place (the live chart's shape)."""
    view = views.view_of(model)
    played = model(**model.small, rng=3)
    try:
        specs = [spec_of(view(played))]
        while played.running and len(specs) <= VIEW_STEPS:
            played.step()
            specs.append(spec_of(view(played)))
    finally:
        if hasattr(played, "close"):
            played.close()
    shapes = {spec_shape(spec) for spec in specs}
    assert len(shapes) == 1, f"{model.__name__}'s view changes more than data and titles from one step to the next"
    data = {json.dumps(spec.get("datasets"), sort_keys=True) for spec in specs}
    assert len(data) > 1, f"{model.__name__}'s view shows the same data at steps 0 to {played.steps}"
    for spec in specs[:: len(specs) - 1]:
        assert vl_convert.vegalite_to_svg(spec).startswith("<svg")


def test_a_state_view_is_made_without_altairs_slow_paths(model, monkeypatch):
    """A player redraws its view several times a second, so the view gives ``encode`` channel objects, not strings
    (Altair parses a string through its whole schema, ~2.5 ms: vega/altair#3547), and makes its layers and
    concatenations through viz (coordkit/compound.py: without Altair's copies of every part)."""
    parsed = []
    parse = schemapi._FromDict.__init__
    monkeypatch.setattr(schemapi._FromDict, "__init__", lambda converter, *args: parsed.append(parse(converter, *args)))
    played = model(**model.small, rng=3)
    try:
        played.step()
        chart = views.view_of(model)(played)
    finally:
        if hasattr(played, "close"):
            played.close()
    assert not parsed, f"{model.__name__}'s view gives encode() {len(parsed)} string(s): give channel objects"
    altairs = [type(part).__name__ for part in _parts(chart) if type(part) in ALTAIR_COMPOUNDS]
    assert not altairs, f"{model.__name__}'s view makes {altairs} by Altair: use viz.layer, viz.hconcat, viz.vconcat"


ALTAIR_COMPOUNDS = (alt.LayerChart, alt.HConcatChart, alt.VConcatChart)


def _parts(chart):
    """``chart`` and every chart within it."""
    yield chart
    for key in ("layer", "hconcat", "vconcat", "concat", "spec"):
        inner = chart._get(key)
        for part in inner if isinstance(inner, list) else [inner]:
            if isinstance(part, alt.TopLevelMixin):
                yield from _parts(part)
