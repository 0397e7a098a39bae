"""The demo's catalogue and screenplay (Agora paper, App. D.1–D.2): 15 servers with D.2's models, task data and
answers that satisfy their schemas, validation errors that say where, the dependency graph, and the queries."""

import copy
import hashlib
import json
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from coordkit.agora.screenplay import pareto_split, query_budgets, screenplay
from coordkit.agora.tasks import (
    CATALOGUE,
    CatalogueError,
    example_input,
    json_copy,
    keyed_rng,
    load_catalogue,
    validate,
)
from coordkit.parameters import ParameterError

CATALOGUE_DATA = json.loads(CATALOGUE.read_text())


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def test_the_catalogue_has_the_demos_15_servers_with_d2s_model_split(catalogue):
    assert len(catalogue.servers) == 15
    assert Counter(server.model for server in catalogue.servers.values()) == {
        "gpt-4o": 9,
        "llama-3-405b": 4,
        "gemini-1.5-pro": 2,
    }
    named = {"hotel", "taxi", "restaurant", "delivery", "traffic", "weather", "ski_lodge", "cinema", "tours"}
    assert named <= set(catalogue.servers)
    assert {catalogue.servers[name].model for name in named} == {"gpt-4o"}
    pairs = catalogue.pairs()
    assert len(pairs) == len(set(pairs)) >= 15 and {server for server, _ in pairs} == set(catalogue.servers)


def test_a_tasks_contract_is_its_name_description_and_two_schemas(catalogue):
    contract = catalogue.task("weather", "queryWeather").contract()
    assert contract == {
        "name": "queryWeather",
        "description": "The weather forecast for a location on a date.",
        "input": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "a city or a ski resort"},
                "date": {"type": "string", "description": "YYYY-MM-DD"},
            },
            "required": ["location", "date"],
        },
        "output": {
            "type": "object",
            "properties": {
                "temperature": {"type": "number", "minimum": -20, "maximum": 40, "description": "degrees Celsius"},
                "precipitation": {"type": "number", "minimum": 0, "maximum": 100, "description": "millimetres"},
                "weatherCondition": {"type": "string", "enum": ["sunny", "cloudy", "rainy", "snowy"]},
            },
            "required": ["temperature", "precipitation", "weatherCondition"],
        },
    }
    with pytest.raises(KeyError, match="no server 'spa'"):
        catalogue.task("spa", "book")
    with pytest.raises(KeyError, match="server 'taxi' has no task 'fly'"):
        catalogue.task("taxi", "fly")


def test_every_example_input_and_answer_satisfies_its_schema_for_many_seeds(catalogue):
    for server, name in catalogue.pairs():
        task = catalogue.task(server, name)
        for seed in range(150):
            instance = example_input(task, np.random.default_rng(seed))
            validate(instance, task.input)
            validate(catalogue.answer(task, instance, seed=seed), task.output)


def test_generators_reach_every_enum_value_and_both_bounds(catalogue):
    task = catalogue.task("cinema", "buyTickets")
    seen = [example_input(task, np.random.default_rng(seed)) for seed in range(300)]
    assert {x["movie"] for x in seen} == {"Forrest Gump", "Stand by Me", "The Silence of the Lambs"}
    assert {x["hour"] for x in seen} == {18, 20} and {x["numTickets"] for x in seen} == set(range(1, 7))
    ski = catalogue.task("ski_lodge", "rentSki")  # the task's own generator: ski resorts, not cities
    assert {example_input(ski, np.random.default_rng(s))["location"] for s in range(100)} <= {
        "Zermatt", "St. Moritz", "Chamonix", "Kitzbuehel", "Cortina"
    }  # fmt: skip


def test_answers_are_a_function_of_the_seed_and_the_question(catalogue):
    task = catalogue.task("hotel", "bookRoom")
    instance = {"location": "Vienna", "date": "2024-10-01", "nights": 2, "guests": 2}
    assert catalogue.answer(task, instance, seed=7) == catalogue.answer(task, dict(instance), seed=7)
    assert len({json.dumps(catalogue.answer(task, instance, seed=s)) for s in range(10)}) > 5
    other = dict(instance, nights=3)
    assert catalogue.answer(task, other, seed=7) != catalogue.answer(task, instance, seed=7)


def test_a_row_drawn_once_is_given_as_a_copy(catalogue):
    """A tool keeps the rows it drew, and each caller gets a copy of its own, so that changing one changes none
    given later."""
    tool = next(tool for server in catalogue.servers.values() for tool in server.tools.values())
    arguments = {name: f"value of {name}" for name in tool.key}
    first = tool.row(arguments, seed=3)
    first.clear()
    again = tool.row(dict(arguments), seed=3)
    assert again and again == tool._draw({name: arguments[name] for name in tool.key}, 3)
    assert again is not tool.row(arguments, seed=3)


def test_a_json_copy_is_a_deep_copy():
    value = {"menu": [{"dish": "soup", "tags": ["hot", None]}, 3.5, True], "empty": {}, "n": 0}
    copied = json_copy(value)
    assert copied == copy.deepcopy(value)
    copied["menu"][0]["tags"].append("cold")
    assert value["menu"][0]["tags"] == ["hot", None]


def test_a_servers_answer_carries_what_its_dependencies_answer(catalogue):
    traffic = catalogue.task("traffic", "getTraffic")
    weather = catalogue.task("weather", "queryWeather")
    for seed in range(20):
        taxi = catalogue.task("taxi", "callTaxi")
        ride = example_input(taxi, np.random.default_rng(seed))
        asked = {"location": ride["location"], "date": ride["date"]}
        assert catalogue.answer(taxi, ride, seed)["traffic"] == catalogue.answer(traffic, asked, seed)["traffic"]
        ski = catalogue.task("ski_lodge", "bookLodgeRoom")
        stay = example_input(ski, np.random.default_rng(seed))
        forecast = catalogue.answer(weather, {"location": stay["location"], "date": stay["date"]}, seed)
        reply = catalogue.answer(ski, stay, seed)
        assert (reply["weatherCondition"], reply["temperature"]) == (
            forecast["weatherCondition"],
            forecast["temperature"],
        )
        if forecast["weatherCondition"] == "snowy":  # the temperature is drawn given the condition
            assert forecast["temperature"] <= 1


def test_an_answer_refuses_input_that_breaks_the_tasks_schema(catalogue):
    task = catalogue.task("cinema", "buyTickets")
    with pytest.raises(ValueError, match=r"cinema.buyTickets input.hour is 19, not one of \[18, 20\]"):
        catalogue.answer(task, {"date": "2024-10-01", "hour": 19, "numTickets": 2, "movie": "Stand by Me"})


@pytest.mark.parametrize(
    ("instance", "path", "message"),
    [
        ({"cuisine": "italian"}, "$", "has no 'menu'"),
        ({"cuisine": "thai", "menu": []}, "$.cuisine", "is 'thai', not one of"),
        ({"cuisine": "indian", "menu": [{"name": "Dal", "price": 9}, {"name": "Naan", "price": "3"}]},
         "$.menu[1].price", "is '3', not of type number"),
        ({"cuisine": "indian", "menu": [{"name": "Dal", "price": -1}]}, "$.menu[0].price", "below its minimum 0"),
        ({"cuisine": "indian", "menu": [{"price": 1}]}, "$.menu[0]", "has no 'name'"),
        ({"cuisine": "indian", "menu": {"name": "Dal"}}, "$.menu", "not of type array"),
        (["indian"], "$", "not of type object"),
    ]
)  # fmt: skip
def test_validation_errors_name_the_path(catalogue, instance, path, message):
    schema = catalogue.task("restaurant", "getMenu").output
    with pytest.raises(ValueError, match=message) as error:
        validate(instance, schema)
    assert str(error.value).startswith(f"{path} ")


def test_validation_keeps_json_types_apart():
    validate(3, {"type": "number"})
    validate(2.5, {"type": "number", "minimum": 0, "maximum": 3})
    with pytest.raises(ValueError, match="is 2.5, not of type integer"):
        validate(2.5, {"type": "integer"})
    with pytest.raises(ValueError, match="is True, not of type integer"):
        validate(True, {"type": "integer"})
    with pytest.raises(ValueError, match="above its maximum 9"):
        validate(10, {"type": "integer", "maximum": 9})
    with pytest.raises(ValueError, match="is 1, not one of"):
        validate(1, {"enum": [True, False]})
    validate(True, {"type": "boolean", "enum": [True]})
    validate("12", {"minimum": 50})  # bounds apply to numbers only, as in JSON Schema


def test_the_dependency_graph_is_the_papers_plus_tours(catalogue):
    graph = catalogue.graph()
    assert isinstance(graph, nx.DiGraph) and nx.is_directed_acyclic_graph(graph)
    assert set(graph.nodes) == set(catalogue.servers) and graph.nodes["parking"]["model"] == "gemini-1.5-pro"
    assert set(graph.edges) == {
        ("taxi", "traffic"),
        ("restaurant", "delivery"),
        ("delivery", "traffic"),
        ("ski_lodge", "weather"),
        ("tours", "weather"),
    }
    assert nx.has_path(graph, "restaurant", "traffic")  # Figure 4's workflow, two hops


def _broken(tmp_path, change):
    data = json.loads(json.dumps(CATALOGUE_DATA))
    change(data)
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(data))
    return path


def _server(data, name):
    return next(server for server in data["servers"] if server["name"] == name)


def _cycle(data):
    weather = _server(data, "weather")
    weather["dependencies"] = ["tours"]
    weather["tasks"][1]["uses"].insert(0, "tours.listTours")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _server(d, "taxi")["tasks"][0]["output"].append("tip"),
         "server 'taxi', task 'callTaxi', output: unknown field 'tip'"),
        (lambda d: d["fields"]["fare"]["schema"].update(pattern="[0-9]+"),
         r"field 'fare' schema: \['pattern'\] are not in the kit's subset of JSON Schema"),
        (lambda d: d["fields"]["menu"]["schema"]["items"]["properties"]["price"].update(type="money"),
         r"field 'menu' schema.items.properties.price.type is 'money', not one of"),
        (lambda d: d["fields"]["days"]["generate"].pop("max"), r"field 'days' generator: a 'integer' generator needs"),
        (lambda d: _server(d, "hotel").update(model="gpt-5"), "server 'hotel': unknown model 'gpt-5'"),
        (lambda d: _server(d, "taxi")["tasks"][0]["output"].append("precipitation"),
         r"server 'taxi', task 'callTaxi', output: nothing produces \['precipitation'\]"),
        (lambda d: _server(d, "taxi")["tasks"][1]["uses"].insert(0, "weather.queryWeather"),
         r"server 'taxi': dependencies \['traffic'\] but its tasks ask \['traffic', 'weather'\]"),
        (lambda d: _server(d, "taxi")["tasks"][1]["uses"].insert(0, "traffic.jam"),
         "server 'taxi', task 'estimateFare', uses 'traffic.jam': server 'traffic' has no task 'jam'"),
        (lambda d: _server(d, "hotel")["tasks"][0]["uses"].insert(0, "bookRoom"),
         r"server 'hotel', task 'checkAvailability', uses 'bookRoom': nothing gives it \['guests'\]"),
        (lambda d: _server(d, "hotel")["tasks"][0]["uses"].append("minibar"),
         "server 'hotel', task 'checkAvailability', uses 'minibar': no such tool"),
        (lambda d: _server(d, "weather")["tools"][0]["returns"].reverse(),
         "server 'weather', tool 'forecasts', returns: 'precipitation' is drawn from 'weatherCondition', which is not"),
        (_cycle, "the dependencies have a cycle: "),
        (lambda d: d["servers"].append(d["servers"][0]), "server 'weather' appears twice"),
    ],
)  # fmt: skip
def test_a_broken_catalogue_is_refused_with_an_error_naming_the_culprit(tmp_path, change, message):
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(_broken(tmp_path, change))


def test_budgets_follow_the_pareto_layout_and_sum_to_the_queries():
    layout = pareto_split(1000, 85, 0.5, minimum=1)
    assert layout[:3] == [411, 143, 78] and sum(layout) == 1000 and sum(b < 3 for b in layout) == 52
    assert layout == sorted(layout, reverse=True)
    for users in range(1, 30, 3):
        for queries in (users, users + 1, users + 7, 10 * users + 13):
            budgets = query_budgets(users, queries, np.random.default_rng(queries))
            assert sum(budgets) == queries and min(budgets) >= 1 and len(budgets) == users
            assert sorted(budgets, reverse=True) == pareto_split(queries, users, 0.5, minimum=1)
    assert pareto_split(5, 3, 1.0, minimum=1) == [3, 1, 1]


def test_the_screenplay_is_deterministic_and_gives_every_user_its_budget(catalogue):
    pairs = catalogue.pairs()
    frame = screenplay(pairs, users=85, queries=1000, rng=np.random.default_rng(4))
    assert frame.equals(screenplay(pairs, users=85, queries=1000, rng=np.random.default_rng(4)))
    assert not frame.equals(screenplay(pairs, users=85, queries=1000, rng=np.random.default_rng(5)))
    assert list(frame.columns) == ["query", "user", "server", "task"]
    assert frame["query"].tolist() == list(range(1, 1001)) and set(frame["user"]) == set(range(85))
    assert set(zip(frame["server"], frame["task"])) <= set(pairs)
    sizes = frame.groupby("user").size()
    assert sorted(sizes, reverse=True) == pareto_split(1000, 85, 0.5, minimum=1)
    for user, queries in frame.groupby("user"):
        types = Counter(zip(queries["server"], queries["task"]))
        assert len(types) == min(3, sizes[user])  # distinct pairs, at least one query each
        assert sorted(types.values(), reverse=True) == pareto_split(sizes[user], len(types), 1.0, minimum=1)
    first = frame.groupby("user")["query"].min().sort_values()
    assert first.iloc[-1] > 500  # shuffled: the queries of a heavy user are spread over the run
    assert frame.loc[frame["user"] == sizes.idxmax(), "query"].max() > 900


def test_task_types_sets_how_many_pairs_each_user_asks(catalogue):
    frame = screenplay(catalogue.pairs(), users=10, queries=200, rng=np.random.default_rng(0), task_types=5)
    kinds = frame.groupby("user").apply(lambda g: len(set(zip(g["server"], g["task"]))), include_groups=False)
    sizes = frame.groupby("user").size()
    assert (kinds == sizes.clip(upper=5)).all()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"users": 0}, "users must be an integer of at least 1, got 0"),
        ({"users": 2.5}, "users must be an integer"),
        ({"queries": 84}, r"queries must be an integer of at least 85 \(at least one query per user"),
        ({"budget_shape": 0}, "budget_shape must be a positive finite number"),
        ({"split_shape": float("nan")}, "split_shape must be a positive finite number"),
        ({"task_types": 0}, "task_types must be an integer of at least 1"),
        ({"task_types": 31}, "task_types must be at most the 30"),
        ({"rng": 4}, "rng must be a numpy.random.Generator, got int"),
        ({"pairs": [("taxi", "callTaxi")] * 3}, "each \\(server, task\\) must appear once"),
    ],
)
def test_bad_screenplay_parameters_get_clear_errors(catalogue, arguments, message):
    call = {"pairs": catalogue.pairs(), "users": 85, "queries": 1000, "rng": np.random.default_rng(0)} | arguments
    with pytest.raises(ParameterError, match=message):
        screenplay(**call)


@pytest.mark.parametrize("seed", [0, 7, 2**31 - 1, 2**32 - 1, 2**32, 2**40 + 5])
@pytest.mark.parametrize("key", [("input", 12), ("failure", 3, 4), ("taxi", "rides", {"city": "Paris"})])
def test_keyed_rng_draws_as_its_seed_and_digest_words_given_as_a_list(seed, key):
    """keyed_rng hands SeedSequence its entropy as uint32 words for speed: the draws are those of the plain list
    ``[seed, *digest words]`` (what the saved notebooks' numbers were drawn with), for seeds past 32 bits too."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()
    listed = np.random.default_rng([seed, *np.frombuffer(digest, dtype=np.uint32).tolist()])
    keyed = keyed_rng(seed, *key)
    assert keyed.random(8).tolist() == listed.random(8).tolist()
    assert keyed.integers(0, 1000, 8).tolist() == listed.integers(0, 1000, 8).tolist()
