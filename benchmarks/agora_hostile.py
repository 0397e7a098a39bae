"""Agora's HTTP servers as a hostile user meets them: the figures of issue 28's "Measured" bullets on the network.

    .venv/bin/python benchmarks/agora_hostile.py                                   # the code in this tree
    PYTHONPATH=/tmp/before28 .venv/bin/python benchmarks/agora_hostile.py          # a clone of the old code

Every model runs in a child process (this script, ``--child``), so that its memory, its stderr and its open-file
limit are its own; this process plays the outsider, with plain sockets on 127.0.0.1 and no key. Prints:

1. query 2's cost in ``WeatherDemo(transport="http")`` before and after one outside natural-language POST;
2. the LLM turns, routine calls and cost of one protocol-mode query during which 200 outside requests arrive
   (100 in natural language, 100 in the protocol Alice and Bob adopted);
3. Bob's ``/.wellknown`` (protocols, bytes) and the last query's cost after 300 posted protocol documents;
4. 200 clients pipelining ``GET /.wellknown`` without reading the replies, for 10 s: the server's RSS before, at
   its peak and 3 s after the clients left, and the model's next three steps; first against the demo after 3,
   then against a toy endpoint whose listing is as large as Bob's became on the old code (958 KB);
5. 1,100 idle connections to Bob's server in a child whose open-file limit is 1,024, held 10 s (the issue held
   them 45 s): the stderr bytes and tracebacks written meanwhile, whether the child can write its frame to a file,
   and its next step's time;
6. the status and body of each malformed request, sent by the outsider (no key) and, where the body matters, by
   the run itself (its own key, taken in the child from the transport: only to show what the run's agents get);
7. issue 43's hostile scenarios: ``WeatherDemo(transport="http", queries=150)``'s last 149 steps, quiet, beside 250
   outsiders' connections pipelining 200 ``GET /.wellknown`` each (a fresh connection for every 200, for the whole
   run), beside 300 connections reconnecting as fast as the servers' answers and 503s allow, and quiet again: the
   seconds, their ratio to the quiet runs' mean (the target: at most 1.5) and whether the frame is the quiet one's;
8. one seed, one answer under load: 5 runs of ``WeatherDemo(transport="http", queries=30)`` beside 2 CPU-bound
   processes per core and an outsider pipelining on 8 connections, each frame compared with a quiet run's, and the
   routines the wall-clock safety net stopped (``routine_timeouts``; the old code has no such count).

    .venv/bin/python benchmarks/agora_hostile.py --parts 7,8
"""

import argparse
import hashlib
import json
import os
import re
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SCRIPT = Path(__file__).resolve()
HOLD_S = 10.0


# --- the child: a model (or a toy endpoint) driven through stdin, answering one JSON line per command ---------------


def child(kind: str, nofile: int | None) -> None:
    if nofile is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    tempfile.gettempdir()  # found now, since finding it opens files
    from coordkit.agora.model import WeatherDemo
    from coordkit.agora.protocol import ProtocolDocument, WellKnown
    from coordkit.agora.transport import HTTPTransport

    if kind.startswith("weather"):  # weather, or weather:<queries>
        model = WeatherDemo(transport="http", queries=int(kind.partition(":")[2] or 10), rng=0)
        channel = model.channel
    else:  # a toy endpoint whose listing is 300 documents, 958 KB
        documents = [ProtocolDocument(f"document {i}\n" + "x" * 3180) for i in range(300)]
        listing = WellKnown({d.hash: (d.data_uri,) for d in documents})

        class Listing:
            name = "bob"

            def handle(self, envelope):
                raise NotImplementedError

            def wellknown(self):
                return listing

        model, channel = None, HTTPTransport()
        channel.register(Listing())
    answer({"ports": {name: int(channel.url_of(name).rsplit(":", 1)[1]) for name in channel.names}, "pid": os.getpid()})
    for line in sys.stdin:
        command, *arguments = line.rstrip("\n").split(" ", 1)
        if command == "quit":
            break
        answer(COMMANDS[command](model, channel, *arguments))
    channel.close()


def answer(value) -> None:
    print(json.dumps(value), flush=True)


def step(model, channel) -> dict:
    start = time.perf_counter()
    try:
        model.step()
    except Exception as error:  # the figure to report, whatever the old code raised
        return {"seconds": time.perf_counter() - start, "error": f"{type(error).__name__}: {error}"[:200]}
    return {"seconds": time.perf_counter() - start}


def row(model, channel, query: str) -> dict:
    found = model.frame().iloc[int(query)]
    counts = {"llm_turns": int(found["llm_turns"]), "routine_calls": int(found["routine_calls"])}
    return {"mode": found["mode"], "cost": float(found["cost"])} | counts


def write_frame(model, channel) -> dict:
    path = Path(tempfile.gettempdir()) / f"agora-hostile-{os.getpid()}.csv"
    try:
        model.frame().to_csv(path)
    except OSError as error:
        return {"written": False, "error": f"{type(error).__name__}: {error}"[:200]}
    path.unlink()
    return {"written": True}


def requests(model, channel) -> dict:
    """Alice's last natural-language request and her last request in the adopted protocol, as JSON text."""
    sent = [e.request for e in channel.transcript if e.sender == "alice" and e.path == "/"]
    return {
        "natural_language": next(r for r in reversed(sent) if '"protocolHash": null' in r),
        "protocol": next((r for r in reversed(sent) if '"protocolHash": null' not in r), None),
    }


def keyed(model, channel, case: str) -> dict:
    """``case`` sent with the run's own key (none on the old code), to show what the run's agents would get."""
    key = getattr(channel, "_key", None)
    auth = f"Authorization: Bearer {key}\r\n".encode() if key else b""
    port = int(channel.url_of(channel.names[0]).rsplit(":", 1)[1])
    request, half_close = malformed_requests()[case]
    return exchange(port, request.replace(b"{auth}", auth), half_close=half_close)


def play(model, channel) -> dict:
    """The rest of the run: its seconds, its frame's SHA-256 and how its routines failed."""
    start = time.perf_counter()
    steps = 0
    while model.running:
        model.step()
        steps += 1
    seconds = time.perf_counter() - start
    frame = model.frame()
    counts = {name: int(frame[name].sum()) for name in ("routine_fallbacks", "routine_timeouts") if name in frame}
    return {"seconds": seconds, "steps": steps, "frame": hashlib.sha256(frame.to_csv().encode()).hexdigest()} | counts


COMMANDS = {"step": step, "row": row, "frame": write_frame, "requests": requests, "keyed": keyed, "play": play}


# --- the outsider of parts 7 and 8: many connections from one process, no key, until it is stopped ----------------

LISTING = b"GET /.wellknown HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
PIPELINED = 200  # GETs a pipelining connection sends at once; then it reads their answers and starts afresh


def outsider(mode: str, ports: list[int], connections: int) -> None:
    """``pipelining``: each connection sends ``PIPELINED`` GETs at once and, answered or cut off, is opened afresh;
    ``reconnecting``: each sends one GET asking to close and, answered or refused, connects again at once. Prints
    the answers' statuses it counted when stopped (SIGTERM)."""
    request = (
        LISTING * PIPELINED if mode == "pipelining" else LISTING.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
    )
    expected = PIPELINED if mode == "pipelining" else 1
    selector, counts = selectors.DefaultSelector(), {"200": 0, "503": 0, "connections": 0}

    def report(signum, frame):
        print(json.dumps(counts), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, report)

    def connect(number: int) -> None:
        connection = socket.socket()
        connection.setblocking(False)
        connection.connect_ex(("127.0.0.1", ports[number % len(ports)]))
        counts["connections"] += 1
        selector.register(connection, selectors.EVENT_READ | selectors.EVENT_WRITE, [number, request, 0])

    def again(connection: socket.socket, number: int) -> None:
        selector.unregister(connection)
        connection.close()
        connect(number)

    for number in range(connections):
        connect(number)
    while True:
        for key, events in selector.select(timeout=1):
            connection, state = key.fileobj, key.data
            if connection.fileno() < 0:
                continue
            if events & selectors.EVENT_WRITE and state[1]:
                try:
                    state[1] = state[1][connection.send(state[1]) :]
                except BlockingIOError:
                    pass
                except OSError:
                    again(connection, state[0])
                    continue
                if not state[1]:
                    selector.modify(connection, selectors.EVENT_READ, state)
            if events & selectors.EVENT_READ:
                try:
                    chunk = connection.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                for status in ("200", "503"):
                    counts[status] += chunk.count(f"HTTP/1.1 {status}".encode())
                state[2] += chunk.count(b"HTTP/1.1 ")
                if not chunk or state[2] >= expected:
                    state[1], state[2] = request, 0
                    again(connection, state[0])


class Outsider:
    """An outsider process (``outsider``) against ``ports``."""

    def __init__(self, mode: str, ports: list[int], connections: int):
        arguments = ["--outsider", mode, "--ports", ",".join(map(str, ports)), "--connections", str(connections)]
        self.process = subprocess.Popen([sys.executable, str(SCRIPT), *arguments], stdout=subprocess.PIPE, text=True)

    def stop(self) -> dict:
        self.process.terminate()
        counts = json.loads(self.process.stdout.readline() or "{}")
        self.process.wait()
        return counts


def burners() -> list[subprocess.Popen]:
    """Two CPU-bound processes per core."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]


# --- raw HTTP, as an outsider sends it ------------------------------------------------------------------------------


def exchange(port: int, request: bytes, *, half_close: bool = False, timeout_s: float = 5.0) -> dict:
    """Send ``request`` on a new connection; the reply's status and body, or how the connection ended."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as connection:
        try:
            connection.sendall(request)
            if half_close:
                connection.shutdown(socket.SHUT_WR)
        except OSError as error:
            sent_error = type(error).__name__
        else:
            sent_error = None
        received = b""
        try:
            while chunk := connection.recv(65536):
                received += chunk
                if reply_complete(received):
                    break
        except TimeoutError:
            return {"status": "no answer", "body": f"(nothing within {timeout_s:g} s)"}
        except OSError as error:
            if not received:
                return {"status": "no answer", "body": f"({type(error).__name__}; sending: {sent_error})"}
    if not received:
        return {"status": "no answer", "body": "(connection closed)"}
    head, _, body = received.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    return {"status": status, "body": body.decode("utf-8", "replace")[:300]}


def reply_complete(received: bytes) -> bool:
    head, found, body = received.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return bool(found) and (length is None or len(body) >= int(length[1]))


def post(port: int, body: str, auth: bytes = b"") -> dict:
    data = body.encode("utf-8")
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return exchange(port, head.encode() + auth + b"\r\n" + data)


def get_listing(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"GET /.wellknown HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := connection.recv(1 << 20):
            received += chunk
    return received.partition(b"\r\n\r\n")[2]


NATURAL = b'{"protocolHash": null, "protocolSources": [], "body": "What is the weather in queryWeather London?"}'
MULTIPART = b'--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello\r\n'  # no closing boundary
DIGITS = b'{"protocolHash": null, "protocolSources": [], "body": ' + b"1" * 100_000 + b"}"


def _post_head(length: int | str, content_type: str = "application/json") -> bytes:
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
    return head.encode() + b"{auth}\r\n"


def malformed_requests() -> dict[str, tuple[bytes, bool]]:
    """Each case's request, ``{auth}`` where the key goes, and whether the client half-closes after sending it
    (made when needed: a 9 MB body held from the start would raise the child's memory figures)."""
    return {
        "body over 8 MB": (_post_head(9_000_000) + b"x" * 9_000_000, False),
        "bad Content-Length": (_post_head("12abc") + b"{}", False),
        "bad chunk size": (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n{auth}\r\nzz\r\n{}\r\n0\r\n\r\n",
            False,
        ),
        "garbage request line": (b"\x16\x03\x01\x02\x00 hello there\r\n{auth}\r\n", False),
        "headers of 100 KB": (b"GET /.wellknown HTTP/1.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n{auth}\r\n", False),
        "multipart body": (_post_head(len(MULTIPART), "multipart/form-data; boundary=xyz") + MULTIPART, False),
        "100,000-digit number": (_post_head(len(DIGITS)) + DIGITS, False),
        "half-closed client": (_post_head(len(NATURAL)) + NATURAL, True),
    }


# --- the parent: children, attacks, figures -------------------------------------------------------------------------


class Child:
    """A child process running a model (``kind``), its stderr in a file of its own."""

    def __init__(self, kind: str = "weather", nofile: int | None = None):
        self.stderr = tempfile.TemporaryFile()
        command = [sys.executable, str(SCRIPT), "--child", kind] + ([] if nofile is None else ["--nofile", str(nofile)])
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True
        )
        hello = self.read()
        self.ports, self.pid = hello["ports"], hello["pid"]

    def read(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.stderr.seek(0)
            raise RuntimeError("the child ended: " + self.stderr.read()[-2000:].decode(errors="replace"))
        return json.loads(line)

    def ask(self, *command) -> dict:
        self.process.stdin.write(" ".join(map(str, command)) + "\n")
        self.process.stdin.flush()
        return self.read()

    def steps(self, n: int) -> list[float]:
        return [self.ask("step")["seconds"] for _ in range(n)]

    def stderr_bytes(self) -> int:
        return os.fstat(self.stderr.fileno()).st_size

    def stderr_text(self, start: int) -> str:
        self.stderr.seek(start)
        return self.stderr.read().decode(errors="replace")

    def rss_mb(self, field: str = "VmRSS") -> float:
        """The child's resident memory now (``VmHWM``: its peak so far), from /proc."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(rf"{field}:\s+(\d+) kB", status)[1]) / 1024

    def close(self) -> None:
        """Ask the child to close its transport and end; after 60 s, say so and kill it."""
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            print("   (the child had not closed its transport 60 s after being asked to: killed)")
            self.process.kill()
            self.process.wait()
        self.stderr.close()


def one_outside_post() -> None:
    child = Child()
    child.steps(2)
    before = child.ask("row", 2)["cost"]
    reply = post(child.ports["weather"], child.ask("requests")["natural_language"])
    after = child.ask("row", 2)["cost"]
    print(f"1. query 2's cost: {before:.5f} → {after:.5f} after one outside POST (answered {reply['status']})")
    child.close()


def outside_requests_during_a_step() -> None:
    child = Child()
    child.steps(5)
    usual = child.ask("row", 5)
    sent = child.ask("requests")
    bodies = [sent["natural_language"]] * 100 + [sent["protocol"]] * 100
    port = child.ports["weather"]
    with ThreadPoolExecutor(200) as pool:
        replies = pool.map(lambda body: post(port, body), bodies)
        time.sleep(0.05)
        child.ask("step")
        statuses = sorted({reply["status"] for reply in replies})
    hit = child.ask("row", 6)
    print(
        f"2. query 6 with 200 outside requests: {hit['llm_turns']} LLM turns, {hit['routine_calls']} routine calls, "
        f"cost {hit['cost']:.5f} (query 5 alone: {usual['llm_turns']}, {usual['routine_calls']}, "
        f"{usual['cost']:.5f}); outsiders got {statuses}"
    )
    child.close()


def posted_documents(child: Child) -> None:
    port = child.ports["weather"]
    listing = json.loads(get_listing(port))
    ((served_hash, sources),) = listing.items()
    from coordkit.agora.protocol import Envelope, ProtocolDocument, fetch

    document = fetch(sources, served_hash)
    body = json.loads(child.ask("requests")["protocol"])["body"]
    variants = [ProtocolDocument(document.text + "\n" * (i + 1)) for i in range(300)]
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda d: post(port, Envelope.in_protocol(d, body).to_json()), variants))
    listing = get_listing(port)
    last = child.ask("row", 5)
    print(
        f"3. after 300 posted documents: Bob lists {len(json.loads(listing))} protocols ({len(listing):,} bytes); "
        f"query 5's cost {last['cost']:.2f} USD; outsiders got {sorted({r['status'] for r in replies})}"
    )


def pipelining(child: Child, label: str, port: int, steps: bool) -> None:
    before = child.rss_mb()
    clients, refused = [], 0
    request = b"GET /.wellknown HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 64
    for _ in range(200):
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        connection.setblocking(False)
        clients.append(connection)
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        for connection in list(clients):
            try:
                while connection.send(request):
                    pass
            except BlockingIOError:
                continue
            except OSError:
                refused += 1
                clients.remove(connection)
        time.sleep(0.1)
    step_times = child.steps(3) if steps else []
    for connection in clients:
        connection.close()
    time.sleep(3)
    after, peak = child.rss_mb(), child.rss_mb("VmHWM")
    timing = f"; next steps {', '.join(f'{t:.3f}' for t in step_times)} s" if steps else ""
    print(
        f"4. {label}: 200 pipelining clients ({refused} cut off by the server): RSS {before:.0f} MB → peak "
        f"{peak:.0f} MB → {after:.0f} MB 3 s after they left{timing}"
    )


def idle_connections() -> None:
    child = Child(nofile=1024)
    child.steps(2)
    start = child.stderr_bytes()
    connections = []
    for _ in range(1100):
        try:
            connections.append(socket.create_connection(("127.0.0.1", child.ports["weather"]), timeout=5))
        except OSError:
            break
    time.sleep(HOLD_S)
    written = child.ask("frame")
    step_time = child.steps(1)[0]
    text = child.stderr_text(start)
    for connection in connections:
        connection.close()
    print(
        f"5. {len(connections)} idle connections, open-file limit 1,024, {HOLD_S:g} s: {len(text.encode()):,} bytes "
        f"of stderr, {text.count('Traceback')} tracebacks; frame to a file: {written}; next step {step_time:.3f} s"
    )
    if text and text.count("Traceback") == 0:
        print("   stderr:", text.strip()[:300])
    child.close()


def malformed() -> None:
    child = Child()
    port = child.ports["weather"]
    before_first_step = post(port, NATURAL.decode())
    print(f"6. POST before the first step: {before_first_step['status']} {before_first_step['body']}")
    child.steps(1)
    start = child.stderr_bytes()
    for case, (request, half_close) in malformed_requests().items():
        outsider = exchange(port, request.replace(b"{auth}", b""), half_close=half_close)
        print(f"   {case}: outsider {outsider['status']} {outsider['body']}")
        if case in ("bad chunk size", "multipart body", "100,000-digit number", "half-closed client"):
            run = child.ask("keyed", case)
            print(f"   {' ' * len(case)}  the run's key: {run['status']} {run['body']}")
    time.sleep(0.5)
    text = child.stderr_text(start)
    print(f"   stderr meanwhile: {len(text.encode())} bytes" + (f": {text.strip()[:400]!r}" if text else ""))
    child.close()


def documents_then_pipelining() -> None:
    child = Child()
    child.steps(5)
    posted_documents(child)
    pipelining(child, "the weather demo (after 3)", child.ports["weather"], steps=True)
    child.close()
    child = Child("listing")
    pipelining(child, "a 958 KB listing", child.ports["bob"], steps=False)
    child.close()


def a_run_beside_outsiders() -> None:
    scenarios = [
        ("quiet", None, 0),
        ("250 connections pipelining 200 GETs each", "pipelining", 250),
        ("300 connections reconnecting as fast as answers and 503s allow", "reconnecting", 300),
        ("quiet again", None, 0),
    ]
    played = []
    for label, mode, connections in scenarios:
        child = Child("weather:150")
        child.steps(1)
        attack = Outsider(mode, list(child.ports.values()), connections) if mode else None
        if attack:
            time.sleep(2)  # under way before the run's steps start
        result = child.ask("play")
        counts = attack.stop() if attack else {}
        child.close()
        played.append((label, result, counts))
    quiet = [result["seconds"] for label, result, _ in played if label.startswith("quiet")]
    mean = sum(quiet) / len(quiet)
    print(f"7. WeatherDemo(transport='http', queries=150), its last {played[0][1]['steps']} steps:")
    for label, result, counts in played:
        same = "the quiet frame" if result["frame"] == played[0][1]["frame"] else "A DIFFERENT FRAME"
        answers = f"; outsiders got {counts['200']:,} answers and {counts['503']:,} 503s" if counts else ""
        print(
            f"   {label}: {result['seconds']:.2f} s ({result['seconds'] / mean:.2f}x the quiet mean), {same}{answers}"
        )


def one_seed_one_answer_under_load() -> None:
    child = Child("weather:30")
    quiet = child.ask("play")
    child.close()
    load = burners()
    try:
        runs = []
        for _ in range(5):
            child = Child("weather:30")
            attack = Outsider("pipelining", list(child.ports.values()), 8)
            runs.append(child.ask("play"))
            attack.stop()
            child.close()
    finally:
        for burner in load:
            burner.kill()
            burner.wait()
    differ = sum(run["frame"] != quiet["frame"] for run in runs)
    timeouts = [run.get("routine_timeouts", "n/a") for run in runs]
    seconds = ", ".join(f"{run['seconds']:.1f}" for run in runs)
    print(
        f"8. WeatherDemo(transport='http', queries=30), 5 runs beside {len(load)} CPU-bound processes and 8 "
        f"pipelining connections: {differ} of 5 frames differ from the quiet run's; seconds "
        f"{seconds} (quiet {quiet['seconds']:.1f}); routine_timeouts {timeouts}"
    )


PARTS = {
    "1": one_outside_post,
    "2": outside_requests_during_a_step,
    "3": documents_then_pipelining,
    "5": idle_connections,
    "6": malformed,
    "7": a_run_beside_outsiders,
    "8": one_seed_one_answer_under_load,
}


def main(parts: list[str]) -> None:
    import coordkit

    print(f"code: {Path(coordkit.__file__).parent}")
    for part in parts:
        PARTS[part]()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--nofile", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--outsider", choices=("pipelining", "reconnecting"), help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--parts", default="1,2,3,5,6,7,8", help="which figures (default all: 1,2,3,5,6,7,8; 3 gives 3 and 4)"
    )
    args = parser.parse_args()
    if args.outsider:
        outsider(args.outsider, [int(port) for port in args.ports.split(",")], args.connections)
    elif args.child:
        child(args.child, args.nofile)
    else:
        main(args.parts.split(","))
