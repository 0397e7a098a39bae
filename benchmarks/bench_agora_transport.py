"""HTTP transport timings against the Agora issue's target (one round trip between two local agents, < 10 ms).

    .venv/bin/python benchmarks/bench_agora_transport.py

Prints the p50/p95 of 200 round trips (alice → bob over real HTTP on 127.0.0.1, keep-alive) and of 200 nested ones
(alice → taxi, whose handler asks traffic before answering: two round trips, the second from a handler thread); then
the same with every connection slot that outsiders may take held by idle outsiders (8 to bob's server, 12 in all),
which tests/test_agora_transport.py checks only for answers: the run's own sends should take about as long.
"""

import socket
import statistics
import time

from coordkit.agora.protocol import Envelope, Response, WellKnown
from coordkit.agora.transport import HTTPTransport, ServerLimits

CAPS = {"connections_per_server": 8, "connections_in_total": 12}  # as tests/test_agora_transport.py's


class Agent:
    """An endpoint that answers at once, or first asks ``ask`` (a nested call)."""

    def __init__(self, name: str, transport: HTTPTransport, ask: str | None = None):
        self.name, self.transport, self.ask = name, transport, ask

    def handle(self, envelope: Envelope) -> Response:
        if self.ask is not None:
            envelope = Envelope.natural_language(self.transport.send(self.name, self.ask, envelope).body)
        return Response.success(envelope.body)

    def wellknown(self) -> WellKnown:
        return WellKnown({})


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(100 * share) - 1]


def round_trip_ms(n: int = 200, *, slots_held: bool = False) -> dict[str, tuple[float, float]]:
    """Print and return the (p50, p95) in milliseconds of ``n`` direct and ``n`` nested round trips (with every
    outsiders' connection slot held by an idle one, if ``slots_held``)."""
    envelope = Envelope.natural_language('{"location": "London, UK", "date": "2024-09-27"}')
    figures, held = {}, []
    with HTTPTransport(limits=ServerLimits(**CAPS)) as transport:
        for agent in (Agent("bob", transport), Agent("taxi", transport, ask="traffic"), Agent("traffic", transport)):
            transport.register(agent)
        if slots_held:
            for name, count in (("bob", 8), ("traffic", 4)):
                port = int(transport.url_of(name).rsplit(":", 1)[1])
                held += [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
        for label, receiver in (("one round trip", "bob"), ("nested (one hop)", "taxi")):
            transport.send("alice", receiver, envelope)  # opens the keep-alive connections
            times = []
            for _ in range(n):
                start = time.perf_counter()
                transport.send("alice", receiver, envelope)
                times.append(1000 * (time.perf_counter() - start))
            figures[label] = (statistics.median(times), percentile(times, 0.95))
        for connection in held:
            connection.close()
    where = ", every outsiders' slot held" if slots_held else ""
    for label, (p50, p95) in figures.items():
        print(f"{label:18} over HTTP{where}, {n} sends: p50 {p50:5.2f} ms, p95 {p95:5.2f} ms   (target < 10 ms)")
    return figures


if __name__ == "__main__":
    round_trip_ms(200)
    round_trip_ms(200, slots_held=True)
