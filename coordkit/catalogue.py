"""The kit's figures and models in words (ids, descriptions, declared parameters), read without importing a family.

``coordkit list``, ``coordkit models`` and ``coordkit run MODEL --help`` print only these words, but importing the
families to read them takes seconds (Mesa, Altair, the LLM SDKs). So the words are kept in ``catalogue.json``,
which ``tools/refresh_catalogue.py`` writes from the imported families. The file is generated, not written by hand,
so that every declaration stays in one place (a family's ``experiments.py`` and ``model.py``);
``tests/test_catalogue.py`` fails, naming the tool, when the file and the families differ.

What this process has registered itself (a family it imported, a model defined in a notebook) is described from
the live objects and wins over the file, so the catalogue never hides what is loaded.
"""

import importlib
import json
import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from coordkit.figures import Figure
    from coordkit.model import Model

FILE = Path(__file__).with_name("catalogue.json")


@dataclass(frozen=True)
class FigureEntry:
    """A registered figure (:class:`coordkit.figures.Figure`) without its functions."""

    id: str
    description: str
    llm_agents: bool
    default_seeds: int
    module: str  # the experiments module that registers it


@dataclass(frozen=True)
class ParameterEntry:
    """A declared parameter (:class:`coordkit.parameters.Param`) in words."""

    name: str
    kind: str  # integer, real, flag, choice, policy or object
    allowed: str  # "an integer from 2 to 8"
    default: str  # as Python writes it: "'rep_textual'", "4", "None"
    unit: str
    optional: str  # what None means, when None is allowed
    doc: str


@dataclass(frozen=True)
class ModelEntry:
    """A model class (:class:`coordkit.model.Model`) without its code."""

    id: str
    module: str
    name: str
    description: str  # the first paragraph of its docstring
    parameters: tuple[ParameterEntry, ...]

    def load(self) -> type["Model"]:
        """The model class itself (this imports its family, and Mesa)."""
        from coordkit.model import registered

        importlib.import_module(self.module)
        return registered()[self.id]


class Catalogue(NamedTuple):
    figures: dict[str, FigureEntry]
    models: dict[str, ModelEntry]


def figures() -> dict[str, FigureEntry]:
    """Every figure by id: the file's, and those registered in this process."""
    live = {fid: describe_figure(figure) for fid, figure in _registered("coordkit.figures").items()}
    return dict(sorted((read().figures | live).items()))


def models() -> dict[str, ModelEntry]:
    """Every model by id (``coordkit run`` knows it by): the file's, and those registered in this process."""
    live = {mid: describe_model(mid, model) for mid, model in _registered("coordkit.model").items()}
    return dict(sorted((read().models | live).items()))


def _registered(module: str) -> dict:
    """What ``module`` (the figure or the model registry) has registered, or nothing if it is not imported: a
    process that has not imported it has registered nothing in it."""
    registry = sys.modules.get(module)
    return registry.registered() if registry else {}


@cache
def read() -> Catalogue:
    """The figures and the models of ``catalogue.json``, by id."""
    data = json.loads(FILE.read_text(encoding="utf-8"))
    figures = [FigureEntry(**entry) for entry in data["figures"]]
    models = [
        ModelEntry(**entry | {"parameters": tuple(ParameterEntry(**p) for p in entry["parameters"])})
        for entry in data["models"]
    ]
    return Catalogue({f.id: f for f in figures}, {m.id: m for m in models})


def describe_figure(figure: "Figure") -> FigureEntry:
    return FigureEntry(
        figure.id, figure.description, figure.llm_agents, figure.default_seeds, figure.compute.__module__
    )


def describe_model(model_id: str, model: type["Model"]) -> ModelEntry:
    parameters = tuple(
        ParameterEntry(p.name, p.type_name(), p.allowed(), repr(p.default), p.unit, p.optional, p.doc)
        for p in model.parameters
    )
    description = (model.__doc__ or "").split("\n\n")[0]
    return ModelEntry(model_id, model.__module__, model.__name__, description, parameters)


def declared() -> Catalogue:
    """What the families declare, read from them (every family is imported: seconds), in the shape of :func:`read`."""
    from coordkit.families import import_families
    from coordkit.figures import registered as registered_figures
    from coordkit.model import registered as registered_models

    import_families()
    figures = {fid: f for fid, f in registered_figures().items() if _in_kit(f.compute.__module__)}
    models = {mid: m for mid, m in registered_models().items() if _in_kit(m.__module__)}
    return Catalogue(
        {fid: describe_figure(figure) for fid, figure in figures.items()},
        {mid: describe_model(mid, model) for mid, model in models.items()},
    )


def _in_kit(module: str) -> bool:
    """Whether ``module`` is the kit's, not a test's or a notebook's that registered a probe."""
    return module.startswith("coordkit.")


def write() -> None:
    """Write ``catalogue.json`` from the families (what ``tools/refresh_catalogue.py`` does)."""
    catalogue = declared()
    data = {name: [asdict(entry) for entry in entries.values()] for name, entries in catalogue._asdict().items()}
    FILE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    read.cache_clear()
