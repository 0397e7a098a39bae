"""The front door: every model is importable from ``coordkit`` itself, lazily, and documented there and in help()."""

import inspect
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import coordkit
from coordkit.families import families
from coordkit.figures import all_figures
from coordkit.model import Model, models

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
MODELS = {mid: m for mid, m in models().items() if m.__module__.startswith("coordkit.")}  # not a test's probes
FIGURES = [fid for fid, f in all_figures().items() if f.compute.__module__.startswith("coordkit.")]


def test_import_coordkit_loads_no_model_chart_or_llm_library():
    heavy = ("mesa", "altair", "vl_convert", "anthropic", "httpx", "pandas")
    probe = f"import sys, coordkit; print([name for name in {heavy} if name in sys.modules])"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "[]"


def test_the_llm_layer_imports_the_anthropic_sdk_only_when_a_client_is_made():
    """A kernel that imports ``open_llm`` and plays rule-based agents does not pay the SDK's 3.5 s of CPU."""
    probe = (
        "import sys; from coordkit.llm.session import open_llm; before = 'anthropic' in sys.modules;"
        " from coordkit.llm.anthropic_client import AnthropicClient; AnthropicClient();"
        " print(before, 'anthropic' in sys.modules)"
    )
    with_a_key = os.environ | {"ANTHROPIC_API_KEY": "not-a-real-key"}  # (no call is made)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=with_a_key)
    assert done.stdout.strip() == "False True", done.stderr


def test_the_front_doors_names():
    from coordkit import AgoraNetwork, BeerGame, figures, sweep  # noqa: F401 — the import is the test
    from coordkit import models as all_models

    assert BeerGame.__module__ == "coordkit.rep.beer_game.model" and AgoraNetwork.__name__ == "AgoraNetwork"
    assert all_models is models and figures.get("rep-beer-fig1").id == "rep-beer-fig1"


def test_sweep_is_the_function_and_its_module_is_sweeps():
    import coordkit.sweeps  # noqa: F401
    from coordkit import SweepError, sweep

    assert inspect.isfunction(sweep) and sweep.__module__ == "coordkit.sweeps" and coordkit.sweep is sweep
    assert SweepError.__module__ == "coordkit.sweeps"


def test_the_old_sweep_module_warns_and_keeps_sweep_the_function():
    sys.modules.pop("coordkit.sweep", None)
    with pytest.warns(DeprecationWarning, match="coordkit.sweeps") as caught:
        from coordkit.sweep import SweepError, sweep  # the import system would set coordkit.sweep to the module

    assert caught[0].filename == __file__  # the warning points at the import that needs changing
    assert sweep is coordkit.sweeps.sweep and coordkit.sweep is sweep and SweepError is coordkit.sweeps.SweepError


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'BeerGam'"):
        coordkit.BeerGam  # noqa: B018


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_every_model_is_reachable_from_the_top(model_id):
    model = MODELS[model_id]
    assert getattr(coordkit, model.__name__) is model
    assert model.__name__ in coordkit.__all__ and model.__name__ in dir(coordkit)


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_a_models_help_documents_its_constructor_and_every_parameter(model_id):
    model = MODELS[model_id]
    assert model.__doc__.strip() == inspect.cleandoc(model.__doc__), "the docstring is indented alike throughout"
    for name in [*model.parameters.names, "rng"]:
        assert f"\n{name} : " in model.__doc__, name
    assert inspect.getdoc(model.__init__) == inspect.getdoc(Model.__init__)
    assert "Overload this method" not in pydoc.render_doc(model, renderer=pydoc.plaintext)


def _table_rows(doc: str) -> list[set[str]]:
    """The words of each row of the module docstring's table (a row's cells may run onto the lines below)."""
    table = doc.split("\n---")[1].split("\n\n")[0].splitlines()[1:]
    rows = []
    for line in table:
        if not line.startswith(" "):
            rows.append(set())
        rows[-1] |= set(line.split())
    return rows


def test_the_help_table_names_every_family_its_notebook_and_its_figures():
    rows = _table_rows(coordkit.__doc__)
    for family in families():
        row = next((row for row in rows if family in row), None)
        assert row is not None, f"{family} has no row in coordkit's docstring"
        notebook = next(word for word in row if word.endswith(".ipynb"))
        assert family in (NOTEBOOKS / notebook).read_text(), f"{notebook} does not use {family}"
        figures = {fid for fid, f in all_figures().items() if f.compute.__module__.startswith(f"{family}.")}
        assert figures <= row, f"{family}'s row lacks {figures - row}"
    assert {word for row in rows for word in row} >= set(FIGURES)


def test_help_coordkit_opens_with_the_table():
    description = pydoc.render_doc(coordkit, renderer=pydoc.plaintext).split("DESCRIPTION")[1]
    assert description.lstrip().startswith("Five papers") and "paper (short title)" in description.split("\n\n")[1]
