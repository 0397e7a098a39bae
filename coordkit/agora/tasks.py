"""The demo's servers and their tasks (Agora paper, §5.3 and Appendix D.1–D.2), from ``data/agora/catalogue.json``.

D.1: a user "receives a random task, some randomly generated data and a description of the task data (including
its schema)", and must "return a reply according to a certain schema"; a server answers with database tools, mock
tools and external tools (other servers). The catalogue holds the 15 servers: each with its LLM (D.2's 9 / 4 / 2,
fixed), its tools, its tasks and the servers it depends on. Its ``notes`` say what the paper leaves unsaid.

- A task's contract with the routine programmer is :meth:`Task.contract`: ``{"name", "description", "input",
  "output"}``, both schemas in the kit's subset of JSON Schema (:mod:`~coordkit.agora.schemas`). The catalogue
  declares every field once, with its schema and its generator, and a task lists its fields: all of them are
  required.
- :func:`example_input` draws a task's data from a ``numpy.random.Generator``.
- :meth:`Catalogue.answer` is the truth a server's human routine or LLM gives: it runs the task's ``uses`` in order,
  a tool (a seeded row: a pure function of the seed, the server, the tool and its key, so the same question always
  gets the same answer) or a dependency's task (asked with the caller's fields of the same names), and fills each
  output field by name from what they returned, else from the input.
- :meth:`Catalogue.graph` is the dependency graph, checked acyclic on loading.
"""

import datetime
import hashlib
import json
import string
import sys
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import networkx as nx
import numpy as np

from coordkit.agora.schemas import SchemaError, check_schema, validate
from coordkit.paths import DATA

CATALOGUE = DATA / "agora" / "catalogue.json"
MAX_ROWS_KEPT = 100_000  # rows a tool keeps drawn, per process (a few tens of MB at most)
MODELS = ("gpt-4o", "llama-3-405b", "gemini-1.5-pro")  # D.2, in order of robustness
GENERATORS = {
    "choice": {"values"},
    "integer": {"min", "max"},
    "number": {"min", "max", "decimals"},
    "date": {"start", "days"},
    "time": {"min", "max"},
    "code": {"letters", "digits"},
    "address": {"streets"},
    "sample": {"values", "min", "max"},
    "lookup": {"by", "values"},
    "given": {"by", "values"},
}


class CatalogueError(ValueError):
    """A catalogue that cannot be used; the message names the server, task, tool or field."""


@dataclass(frozen=True)
class Field:
    """A named piece of task data: its schema and how to draw it."""

    name: str
    schema: dict
    generate: dict


@dataclass(frozen=True)
class Tool:
    """A database table or a mock action (D.1): a row of ``returns`` for each value of ``key``, drawn from a seed."""

    server: str
    name: str
    kind: str
    key: tuple[str, ...]
    returns: tuple[Field, ...]
    _drawn: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # rows by seed and key

    def row(self, arguments: dict, seed: int = 0) -> dict:
        """The tool's row for ``arguments`` (its key fields): the same seed and arguments give the same row (drawn
        once, and a copy given each time: a network asks most rows again and again)."""
        key = {name: arguments[name] for name in self.key}
        label = json.dumps([seed, key], sort_keys=True)
        row = self._drawn.get(label)
        if row is None:
            row = self._draw(key, seed)
            if len(self._drawn) >= MAX_ROWS_KEPT:
                self._drawn.clear()
            self._drawn[label] = row
        return json_copy(row)

    def _draw(self, key: dict, seed: int) -> dict:
        rng = keyed_rng(seed, self.server, self.name, key)
        row: dict = {}
        for returned in self.returns:
            row[returned.name] = draw(returned.generate, rng, key | row)
        return row


@dataclass(frozen=True)
class Task:
    """One kind of query a server answers; ``uses`` runs in order (a tool's name, or ``server.task``)."""

    server: str
    name: str
    description: str
    input: dict
    output: dict
    generators: dict
    uses: tuple[str, ...]

    def contract(self) -> dict:
        """What a protocol for this task must carry: ``{"name", "description", "input", "output"}``."""
        return {"name": self.name, "description": self.description, "input": self.input, "output": self.output}

    @cached_property
    def contract_json(self) -> str:
        """:meth:`contract` as JSON text, written once: a network's prompts show it thousands of times."""
        return json.dumps(self.contract(), ensure_ascii=False)


@dataclass(frozen=True)
class ServerSpec:
    """A server of the demo: its LLM (D.2), its database technology (D.1, a label), tools, tasks, dependencies."""

    name: str
    title: str
    description: str
    model: str
    database: str
    tools: dict[str, Tool]
    tasks: dict[str, Task]
    dependencies: tuple[str, ...]


@dataclass(frozen=True)
class Catalogue:
    """The servers, by name, in catalogue order, and the notes on what the paper does not say."""

    servers: dict[str, ServerSpec]
    notes: tuple[str, ...]

    def task(self, server: str, name: str) -> Task:
        """The task ``name`` of ``server``, with a clear error for either unknown."""
        if server not in self.servers:
            raise KeyError(f"no server {server!r}; the servers are {list(self.servers)}")
        tasks = self.servers[server].tasks
        if name not in tasks:
            raise KeyError(f"server {server!r} has no task {name!r}; its tasks are {list(tasks)}")
        return tasks[name]

    def pairs(self) -> list[tuple[str, str]]:
        """Every (server, task) a user can ask, in catalogue order: the screenplay's task types."""
        return [(server.name, task) for server in self.servers.values() for task in server.tasks]

    def graph(self) -> nx.DiGraph:
        """Servers as nodes (with their model), an edge from each server to each server it asks."""
        graph = nx.DiGraph()
        for server in self.servers.values():
            graph.add_node(server.name, model=server.model)
            graph.add_edges_from((server.name, dependency) for dependency in server.dependencies)
        return graph

    def answer(self, task: Task, instance: dict, seed: int = 0) -> dict:
        """The server's true reply to ``instance``: checked against the task's input and output schemas."""
        validate(instance, task.input, f"{task.server}.{task.name} input")
        known = dict(instance)
        for use in task.uses:
            if "." in use:
                dependency = self.task(*use.split(".", 1))
                asked = {name: known[name] for name in dependency.input["properties"]}
                known.update(self.answer(dependency, asked, seed))
            else:
                known.update(self.servers[task.server].tools[use].row(known, seed))
        reply = {name: known[name] for name in task.output["properties"]}
        validate(reply, task.output, f"{task.server}.{task.name} output")
        return reply


def example_input(task: Task, rng: np.random.Generator) -> dict:
    """Random task data for ``task`` (D.1's "randomly generated data"), its fields drawn in order from ``rng``."""
    instance: dict = {}
    for name in task.input["properties"]:
        instance[name] = draw(task.generators[name], rng, instance)
    return instance


def draw(spec: dict, rng: np.random.Generator, context: dict):
    """One value from a generator (see the catalogue's ``generators``); ``lookup`` and ``given`` read ``context``."""
    kind = spec["kind"]
    if kind == "choice":
        return spec["values"][int(rng.integers(len(spec["values"])))]
    if kind == "integer":
        return int(rng.integers(spec["min"], spec["max"], endpoint=True))
    if kind == "number":
        return min(max(round(float(rng.uniform(spec["min"], spec["max"])), spec["decimals"]), spec["min"]), spec["max"])
    if kind == "date":
        start = datetime.date.fromisoformat(spec["start"])
        return (start + datetime.timedelta(days=int(rng.integers(spec["days"])))).isoformat()
    if kind == "time":
        return f"{int(rng.integers(spec['min'], spec['max'], endpoint=True)):02d}:{5 * int(rng.integers(12)):02d}"
    if kind == "code":
        letters = rng.choice(list(string.ascii_uppercase), spec["letters"])
        digits = rng.choice(list(string.digits), spec["digits"])
        return "".join(letters) + "".join(digits)
    if kind == "address":
        number = int(rng.integers(1, 200, endpoint=True))
        return f"{number} {spec['streets'][int(rng.integers(len(spec['streets'])))]} Street"
    if kind == "sample":
        size = int(rng.integers(spec["min"], spec["max"], endpoint=True))
        chosen = set(rng.choice(len(spec["values"]), size, replace=False).tolist())
        return [value for index, value in enumerate(spec["values"]) if index in chosen]
    if kind == "given":
        return draw(spec["values"][context[spec["by"]]], rng, context)
    return spec["values"][context[spec["by"]]]  # lookup


def json_copy(value):
    """A deep copy of a JSON value (dicts, lists and scalars), as ``copy.deepcopy`` makes it, without its memo."""
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value


def keyed_rng(seed: int, *key) -> np.random.Generator:
    """A generator that depends only on ``seed`` and ``key`` (JSON, hashed with SHA-256: stable across runs).

    Its entropy is ``seed`` and the digest's eight 32-bit words. Given as a ``uint32`` array, which
    ``SeedSequence`` reads as it is, rather than as a list it converts number by number (several times slower, and
    a network draws thousands of these); the same words, so the same draws. A ``seed`` of more than 32 bits goes
    as a list, which ``SeedSequence`` splits into words itself."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()
    if 0 <= seed < 2**32:
        return np.random.default_rng(np.frombuffer(int(seed).to_bytes(4, sys.byteorder) + digest, dtype=np.uint32))
    return np.random.default_rng([seed, *np.frombuffer(digest, dtype=np.uint32).tolist()])


@cache
def load_catalogue(path: Path = CATALOGUE) -> Catalogue:
    """Read and check the catalogue: every error names the server, task, tool or field at fault."""
    data = json.loads(Path(path).read_text())
    fields = {name: _field(name, spec) for name, spec in data["fields"].items()}
    servers: dict[str, ServerSpec] = {}
    for spec in data["servers"]:
        server = _server(spec, fields)
        if server.name in servers:
            raise CatalogueError(f"server {server.name!r} appears twice")
        servers[server.name] = server
    catalogue = Catalogue(servers, tuple(data["notes"]))
    _check_uses(catalogue)
    cycles = list(nx.simple_cycles(catalogue.graph()))
    if cycles:
        raise CatalogueError(f"the dependencies have a cycle: {' -> '.join(cycles[0] + cycles[0][:1])}")
    return catalogue


def _field(name: str, spec: dict) -> Field:
    _check_schema(spec["schema"], f"field {name!r} schema")
    _check_generator(spec["generate"], f"field {name!r} generator")
    return Field(name, spec["schema"], spec["generate"])


def _check_schema(schema: dict, where: str) -> None:
    try:
        check_schema(schema, where)
    except SchemaError as error:
        raise CatalogueError(str(error)) from None


def _check_generator(spec: dict, where: str) -> None:
    kind = spec.get("kind")
    if kind not in GENERATORS:
        raise CatalogueError(f"{where}: unknown kind {kind!r}; the kinds are {sorted(GENERATORS)}")
    missing = GENERATORS[kind] - set(spec)
    if missing:
        raise CatalogueError(f"{where}: a {kind!r} generator needs {sorted(missing)}")
    if kind == "given":
        for value, generator in spec["values"].items():
            _check_generator(generator, f"{where} given {value!r}")


def _check_order(fields: list[Field], generators: dict, known: set, where: str) -> None:
    """A ``lookup`` or ``given`` generator reads a field drawn before it."""
    for drawn in fields:
        by = generators[drawn.name].get("by")
        if by is not None and by not in known:
            raise CatalogueError(f"{where}: {drawn.name!r} is drawn from {by!r}, which is not drawn before it")
        known = known | {drawn.name}


def _server(spec: dict, fields: dict[str, Field]) -> ServerSpec:
    name = spec["name"]
    if spec["model"] not in MODELS:
        raise CatalogueError(f"server {name!r}: unknown model {spec['model']!r}; the models are {list(MODELS)}")
    tools = {tool["name"]: _tool(name, tool, fields) for tool in spec["tools"]}
    tasks = {task["name"]: _task(name, task, fields) for task in spec["tasks"]}
    return ServerSpec(
        name,
        spec["title"],
        spec["description"],
        spec["model"],
        spec["database"],
        tools,
        tasks,
        tuple(spec.get("dependencies", ())),
    )


def _tool(server: str, spec: dict, fields: dict[str, Field]) -> Tool:
    where = f"server {server!r}, tool {spec['name']!r}"
    returns = tuple(_known(fields, name, f"{where}, returns") for name in spec["returns"])
    _check_order(list(returns), {f.name: f.generate for f in returns}, set(spec["key"]), f"{where}, returns")
    return Tool(server, spec["name"], spec["kind"], tuple(spec["key"]), returns)


def _task(server: str, spec: dict, fields: dict[str, Field]) -> Task:
    where = f"server {server!r}, task {spec['name']!r}"
    inputs = [_known(fields, name, f"{where}, input") for name in spec["input"]]
    outputs = [_known(fields, name, f"{where}, output") for name in spec["output"]]
    generators = {field.name: field.generate for field in inputs}
    for name, generator in spec.get("generate", {}).items():
        if name not in generators:
            raise CatalogueError(f"{where}, generate: {name!r} is not one of its inputs {list(generators)}")
        _check_generator(generator, f"{where}, generate {name!r}")
        generators[name] = generator
    _check_order(inputs, generators, set(), f"{where}, input")
    return Task(
        server, spec["name"], spec["description"], _object(inputs), _object(outputs), generators, tuple(spec["uses"])
    )


def _known(fields: dict[str, Field], name: str, where: str) -> Field:
    if name not in fields:
        raise CatalogueError(f"{where}: unknown field {name!r}")
    return fields[name]


def _object(fields: list[Field]) -> dict:
    return {"type": "object", "properties": {f.name: f.schema for f in fields}, "required": [f.name for f in fields]}


def _check_uses(catalogue: Catalogue) -> None:
    """Each task's tools and dependencies exist and get the fields they need; its outputs are all produced."""
    for server in catalogue.servers.values():
        asked = set()
        for task in server.tasks.values():
            where = f"server {server.name!r}, task {task.name!r}"
            known = set(task.input["properties"])
            for use in task.uses:
                if "." in use:
                    other, name = use.split(".", 1)
                    try:
                        dependency = catalogue.task(other, name)
                    except KeyError as error:
                        raise CatalogueError(f"{where}, uses {use!r}: {error.args[0]}") from None
                    needs, gives = set(dependency.input["properties"]), set(dependency.output["properties"])
                    asked.add(other)
                elif use in server.tools:
                    needs, gives = set(server.tools[use].key), {f.name for f in server.tools[use].returns}
                else:
                    raise CatalogueError(f"{where}, uses {use!r}: no such tool; the tools are {list(server.tools)}")
                if needs - known:
                    raise CatalogueError(f"{where}, uses {use!r}: nothing gives it {sorted(needs - known)}")
                known |= gives
            missing = set(task.output["properties"]) - known
            if missing:
                raise CatalogueError(f"{where}, output: nothing produces {sorted(missing)}")
        if asked != set(server.dependencies):
            raise CatalogueError(
                f"server {server.name!r}: dependencies {sorted(server.dependencies)} but its tasks ask {sorted(asked)}"
            )
