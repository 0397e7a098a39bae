"""Routine-sandbox timings against the Agora issue's targets.

    .venv/bin/python benchmarks/bench_agora_sandbox.py

Prints the cold start (a new pool's first call: a worker interpreter started, namespaces entered, modules imported),
then the p50/p95 over 300 warm calls of a Bob-side weather routine of Appendix C's protocol (parse the JSON query,
answer in JSON): through ``run_routine``, a process forked for each call (target < 20 ms), and through a
``RoutineSession``, one process for all its calls (target well under 1 ms). A session's first call, which forks its
process and compiles the routine, is printed apart; the later ones include the fresh process forked after every
``SESSION_CALLS`` (100) calls, 2 of the 300. Last, the p50 over 100 of one query of the network's weather task between
routines the ``SchemaProgrammer`` wrote (user and server, 4 sandbox calls, the event contract of
:func:`coordkit.agora.routines.run` around them), both ways: what a query of the 100-agent network spends on routines
(1,000 queries in < 5 s is its target).
"""

import statistics
import time

from bench_agora_transport import percentile

from coordkit.agora import routines
from coordkit.agora.sandbox import SandboxPool
from coordkit.agora.tasks import load_catalogue

WEATHER = """
import json

FORECASTS = {("London, UK", "2024-09-27"): {"temperature": 11, "precipitation": 12, "weatherCondition": "rainy"}}

def handle(body):
    query = json.loads(body)
    return json.dumps(FORECASTS.get((query["location"], query["date"]), {"error": "unknown location or date"}))
"""
QUERY = '{"location": "London, UK", "date": "2024-09-27"}'
CALLS = 300
FORECAST = load_catalogue().task("weather", "queryWeather")  # the network's weather task and its schemas
REQUEST = {"date": "2024-09-27", "location": "London"}


def forecast(date: str, location: str) -> dict:
    """The weather server's tool: the catalogue's answer."""
    return load_catalogue().answer(FORECAST, {"date": date, "location": location})


def protocol_query(user, server) -> dict:
    """One query: the user's routine sends the request, which the server's routine answers with its tool's help."""
    send = {"send": lambda body: routines.run(server, body, {FORECAST.name: forecast})}
    return routines.run(user, REQUEST, send)


def timed(call, times: int) -> list[float]:
    """The wall time of each of ``times`` calls, in milliseconds."""
    durations = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        durations.append(1000 * (time.perf_counter() - start))
    return durations


def report(label: str, durations: list[float], target: str) -> None:
    print(f"{label + ', p50:':50}{statistics.median(durations):8.3f} ms   ({target})")
    print(f"{label + ', p95:':50}{percentile(durations, 0.95):8.3f} ms")


def main() -> None:
    """Time the sandbox both ways and print the figures (the module docstring says which)."""
    with SandboxPool(1) as pool:
        start = time.perf_counter()
        assert '"rainy"' in pool.run(WEATHER, QUERY)
        cold = 1000 * (time.perf_counter() - start)
        per_call = timed(lambda: pool.run(WEATHER, QUERY), CALLS)
        with pool.session(WEATHER) as session:
            start = time.perf_counter()
            answer = session(QUERY)
            first = 1000 * (time.perf_counter() - start)
            assert answer == pool.run(WEATHER, QUERY)
            in_session = timed(lambda: session(QUERY), CALLS)
        schema = routines.TaskSchema(FORECAST.name, FORECAST.input, FORECAST.output)
        prose = "A date and a place in, a forecast out."
        document = routines.schema_document(schema, prose, name=FORECAST.name, description=FORECAST.description)
        programmer = routines.SchemaProgrammer()
        user, server = programmer.user_routine(document), programmer.server_routine(document)
        with pool.session(user) as user_session, pool.session(server) as server_session:
            expected = forecast(**REQUEST)
            assert protocol_query(user, server) == protocol_query(user_session, server_session) == expected
            query_per_call = timed(lambda: protocol_query(user, server), 100)
            query_in_sessions = timed(lambda: protocol_query(user_session, server_session), 100)
    print(f"{'cold start (first call of a new pool):':50}{cold:8.1f} ms")
    report("run_routine: a process a call, warm", per_call, "target < 20 ms")
    print(f"{'a session: its first call (forks its process):':50}{first:8.3f} ms")
    report("a session: its later calls, one process", in_session, "target well under 1 ms")
    print(f"{'a protocol query (4 calls), a process a call, p50:':50}{statistics.median(query_per_call):8.3f} ms")
    print(f"{'a protocol query (4 calls), in sessions, p50:':50}{statistics.median(query_in_sessions):8.3f} ms")


if __name__ == "__main__":
    main()
