"""The catalogue (coordkit/catalogue.json) says what the families declare, and the command line answers from it, in
a fresh process that imports no family, with the words it printed when it imported them all."""

import importlib
import json
import os
import subprocess
import sys

import pytest

from coordkit import catalogue
from coordkit.figures import all_figures
from coordkit.model import models
from coordkit.parameters import Instance

STALE = "coordkit/catalogue.json differs from the families: run .venv/bin/python tools/refresh_catalogue.py"
FIGURES = {fid: f for fid, f in all_figures().items() if f.compute.__module__.startswith("coordkit.")}
MODELS = {mid: m for mid, m in models().items() if m.__module__.startswith("coordkit.")}  # not a test's probes

# Runs every listing command of the command line in one fresh process, and says which heavy modules it imported.
COLD_COMMANDS = """
import contextlib, io, json, sys
from coordkit import catalogue
from coordkit.cli import main

commands = [["list"], ["models"]] + [["run", model, "--help"] for model in catalogue.models()]
outputs = {}
for command in commands:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        main(command)
    outputs[" ".join(command)] = out.getvalue()
heavy = ("mesa", "altair", "vl_convert", "anthropic", "httpx", "pandas", "numpy")
print(json.dumps({"outputs": outputs, "imported": [name for name in heavy if name in sys.modules]}))
"""


def test_the_catalogue_lists_the_figures_the_families_register():
    on_file, declared = catalogue.read().figures, catalogue.declared().figures
    assert on_file == declared, STALE
    assert set(on_file) == set(FIGURES)


def test_the_catalogue_lists_the_models_and_parameters_the_families_declare():
    on_file, declared = catalogue.read().models, catalogue.declared().models
    assert on_file == declared, STALE
    for model_id, entry in on_file.items():
        model = MODELS[model_id]
        assert (entry.module, entry.name) == (model.__module__, model.__name__)
        assert [p.name for p in entry.parameters] == list(model.parameters.names)


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_a_catalogued_model_loads_its_class(model_id):
    entry = catalogue.read().models[model_id]
    assert entry.load() is MODELS[model_id] is getattr(importlib.import_module(entry.module), entry.name)


@pytest.fixture(scope="module")
def cold() -> dict:
    """The listing commands' outputs in a fresh process, from the catalogue alone, on a terminal wide enough that
    argparse breaks no line (it would break "rule-based" at its hyphen)."""
    wide = os.environ | {"COLUMNS": "10000"}
    done = subprocess.run([sys.executable, "-c", COLD_COMMANDS], capture_output=True, text=True, check=True, env=wide)
    return json.loads(done.stdout)


def test_the_listing_commands_import_no_model_chart_or_llm_library(cold):
    assert cold["imported"] == []


def test_list_prints_every_figure_as_its_family_registers_it(cold):
    expected = [f"{f.id:<20} {'LLM' if f.llm_agents else '   '} {f.description}" for f in FIGURES.values()]
    assert cold["outputs"]["list"].split("\n\n")[0].splitlines() == expected


def test_models_prints_every_model_as_its_class_declares_it(cold):
    expected = [f"{mid:<18} {m.__module__:<28} {m.__doc__.strip().splitlines()[0]}" for mid, m in MODELS.items()]
    assert cold["outputs"]["models"].split("\n\n")[0].splitlines() == expected


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_run_help_describes_every_parameter_as_its_model_declares_it(cold, model_id):
    model = MODELS[model_id]
    help_text = " ".join(cold["outputs"][f"run {model_id} --help"].split())
    assert " ".join(model.__doc__.split("\n\n")[0].split()) in help_text
    for param in model.parameters:
        option = f"--{param.name.replace('_', '-')}"
        if isinstance(param, Instance):
            assert option not in help_text.split()
            continue
        unit = f" [{param.unit}]" if param.unit else ""
        none = f"; none: {param.optional}" if param.optional else ""
        described = f"{param.doc}{unit}: {param.allowed()}{none} (default: {param.default!r})"
        assert f"{option} VALUE {' '.join(described.split())}" in help_text, param.name
