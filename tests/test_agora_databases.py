"""Protocol databases (Agora paper, Appendix D.1): documents by hash with their sources, refused when the hash does
not match, searched by a task's keywords, shared along the chain 1–2–3 every N queries, saved and reopened."""

import sqlite3
import threading

import pytest

from coordkit.agora.databases import DatabaseNetwork, Entry, ProtocolDatabase, keywords
from coordkit.agora.protocol import ProtocolDocument, ProtocolError, protocol_hash, to_data_uri
from coordkit.parameters import ParameterError
from coordkit.paths import DATA

BODY = (DATA / "agora" / "weather_forecast_protocol.txt").read_text().split("\n", 4)[4]
WEATHER = ProtocolDocument.compose(
    BODY,
    name="Weather Forecast Query Protocol",
    description="A protocol for querying the weather forecast for a given date and location.",
)
TAXI = ProtocolDocument.compose(
    '{"pickup": "string", "destination": "string"} -> {"fare": number}',
    name="Taxi Booking",
    description="Book a taxi ride between two addresses and get its fare.",
)
TRAFFIC = ProtocolDocument.compose('{"road": "string"} -> {"delayMinutes": number}', name="Traffic conditions")
PLAIN = ProtocolDocument("Send the city; receive the temperature in degrees Celsius.")


def test_documents_are_stored_by_hash_with_their_sources_in_order_of_arrival():
    db = ProtocolDatabase()
    assert db.add(WEATHER, ["https://db1.example/protocol?id=1"]) == WEATHER.hash
    assert db.add(TAXI.text) == TAXI.hash  # text is hashed on insert
    assert db.add(WEATHER, ["https://mirror.example/w", "https://db1.example/protocol?id=1"]) == WEATHER.hash
    assert len(db) == 2 and db.hashes() == (WEATHER.hash, TAXI.hash) and WEATHER.hash in db
    assert db.get(WEATHER.hash) == WEATHER and db.get(protocol_hash("nothing")) is None
    assert db.listing() == [
        Entry(
            WEATHER.hash,
            WEATHER.name,
            WEATHER.description,
            ("https://db1.example/protocol?id=1", "https://mirror.example/w"),
        ),
        Entry(TAXI.hash, "Taxi Booking", TAXI.description, ()),
    ]


def test_a_document_whose_hash_does_not_match_is_refused_and_not_stored():
    db = ProtocolDatabase()
    tampered = WEATHER.text.replace("°C", "°F")
    with pytest.raises(ProtocolError, match=f"hash is {protocol_hash(tampered)}, not the expected {WEATHER.hash}"):
        db.add(tampered, ["https://evil.example/pd"], expected_hash=WEATHER.hash)
    with pytest.raises(ProtocolError, match=f"a data: source carries the document {WEATHER.hash}, not {TAXI.hash}"):
        db.add(TAXI, [WEATHER.data_uri])
    assert len(db) == 0 and db.listing() == [] and WEATHER.hash not in db
    with pytest.raises(ProtocolError, match="expected_hash: 'w' is not a protocol hash"):
        db.add(WEATHER, expected_hash="w")
    with pytest.raises(ProtocolError, match="'a b' is not a source URI"):
        db.add(WEATHER, ["a b"])
    assert len(db) == 0
    db.add(WEATHER, [to_data_uri(WEATHER.text)], expected_hash=WEATHER.hash)
    assert db.hashes() == (WEATHER.hash,)


def test_a_file_altered_under_a_hash_is_detected(tmp_path):
    path = tmp_path / "db.sqlite"
    ProtocolDatabase(path).add(WEATHER)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE documents SET text = text || ' '")
    with pytest.raises(ProtocolError, match=f"stored under {WEATHER.hash} hashes to .*altered"):
        ProtocolDatabase(path).get(WEATHER.hash)


def test_a_sync_refuses_to_spread_a_text_altered_under_its_hash(tmp_path):
    path = tmp_path / "network.sqlite"
    network = DatabaseNetwork(path, sync_interval=1)
    network["db1"].add(WEATHER)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE documents SET text = text || ' '")
    with pytest.raises(ProtocolError, match=f"db1: the text stored under {WEATHER.hash} hashes to .*altered"):
        network.query_executed()
    assert network["db2"].hashes() == ()
    network.close()


def test_keywords_of_task_types_descriptions_and_lists():
    assert keywords("weather_forecast") == {"weather", "forecast"}
    assert keywords("bookTaxi") == keywords("book-taxi") == keywords(["Book", "TAXI"]) == {"book", "taxi"}
    assert keywords("A protocol for the weather in London") == {"protocol", "weather", "london"}
    with pytest.raises(ParameterError, match="task: .* must be text or a list of words"):
        keywords(["weather", 3])


def test_search_ranks_by_shared_keywords_and_keeps_arrival_order_on_ties():
    db = ProtocolDatabase()
    for document in (PLAIN, TRAFFIC, TAXI, WEATHER):
        db.add(document)
    assert [e.hash for e in db.search("weather_forecast")] == [WEATHER.hash]
    assert [e.name for e in db.search("book a taxi fare")] == ["Taxi Booking"]  # 3 keywords: book, taxi, fare
    assert [e.name for e in db.search(["taxi", "traffic"])] == ["Traffic conditions", "Taxi Booking"]  # tie: 1 each
    assert [e.name for e in db.search("taxi traffic conditions")] == ["Traffic conditions", "Taxi Booking"]  # 2 vs 1
    assert [e.name for e in db.search("traffic conditions for a taxi", limit=1)] == ["Traffic conditions"]
    assert db.search("temperature celsius") == []  # only in PLAIN's text, which has no metadata
    assert db.search("the for a") == []  # stop words only
    for limit in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="limit: .* must be a positive whole number"):
            db.search("taxi", limit=limit)


def test_a_document_added_at_1_reaches_2_after_one_sync_and_3_after_two():
    network = DatabaseNetwork(sync_interval=10)
    db1, db2, db3 = network.databases
    assert network.peers(db1) == (db2,) and network.peers(db2) == (db1, db3) and network.peers(db3) == (db2,)
    db1.add(WEATHER, ["https://db1.example/w"])
    synced = [network.query_executed() for _ in range(30)]
    assert [i + 1 for i, s in enumerate(synced) if s] == [10, 20, 30] and network.syncs == 3
    network = DatabaseNetwork(sync_interval=10)
    db1, db2, db3 = network.databases
    db1.add(WEATHER, ["https://db1.example/w"])
    held = []
    for _ in range(20):
        network.query_executed()
        held.append((WEATHER.hash in db2, WEATHER.hash in db3))
    assert held[:9] == [(False, False)] * 9  # queries 1-9: still only at 1
    assert held[9:19] == [(True, False)] * 10  # sync 1 after query 10: one hop
    assert held[19] == (True, True)  # sync 2 after query 20: at 3
    assert db3.listing() == [Entry(WEATHER.hash, WEATHER.name, WEATHER.description, ("https://db1.example/w",))]


def test_documents_flow_both_ways_and_sources_merge():
    network = DatabaseNetwork(sync_interval=1)
    db1, db2, db3 = network.databases
    db1.add(WEATHER, ["https://db1.example/w"])
    db3.add(TAXI, ["https://db3.example/t"])
    db3.add(WEATHER, ["https://db3.example/w"])
    network.query_executed()
    assert db2.hashes() == (WEATHER.hash, TAXI.hash)  # from db1 first, then db3's in their order
    assert db2.listing()[0].sources == ("https://db1.example/w", "https://db3.example/w")
    assert db1.hashes() == (WEATHER.hash,) and db3.hashes() == (TAXI.hash, WEATHER.hash)
    network.query_executed()
    assert db1.hashes() == (WEATHER.hash, TAXI.hash)
    assert [e.sources for e in db1.listing()] == [
        ("https://db1.example/w", "https://db3.example/w"),
        ("https://db3.example/t",),
    ]
    assert db1.listing() == db2.listing()
    assert db3.listing()[1].sources == ("https://db3.example/w", "https://db1.example/w")  # its own first


def test_a_single_database_and_a_longer_chain():
    alone = DatabaseNetwork(size=1, sync_interval=1)
    alone.databases[0].add(WEATHER)
    assert alone.peers(alone.databases[0]) == () and alone.query_executed() and len(alone["db1"]) == 1
    chain = DatabaseNetwork(size=5, sync_interval=2)
    chain["db5"].add(TAXI)
    for _ in range(7):
        chain.query_executed()
    assert [TAXI.hash in d for d in chain.databases] == [False, True, True, True, True]  # 3 syncs, 3 hops
    with pytest.raises(KeyError, match="no database 'db6'; the network has db1, db2, db3, db4, db5"):
        chain["db6"]


def _build(path=":memory:", queries=25):
    network = DatabaseNetwork(path, sync_interval=10)
    network["db1"].add(WEATHER, ["https://db1.example/w"])
    network["db3"].add(TAXI, ["https://db3.example/t", TAXI.data_uri])
    for i in range(queries):
        if i == 12:
            network["db2"].add(TRAFFIC)
        network.query_executed()
    return network


def _state(network):
    return (
        [d.name for d in network.databases],
        [d.listing() for d in network.databases],
        [[d.get(h).text for h in d.hashes()] for d in network.databases],
        (network.sync_interval, network.queries, network.syncs),
    )


def test_a_network_is_saved_and_reopened_with_the_same_contents_and_order(tmp_path):
    network = _build()
    network.save(tmp_path / "agora.sqlite")
    again = DatabaseNetwork.open(tmp_path / "agora.sqlite")
    assert _state(again) == _state(network) and again.queries == 25 and again.syncs == 2
    for _ in range(10):  # a reopened run continues as the original does
        network.query_executed()
        again.query_executed()
    assert _state(again) == _state(network) and again.syncs == 3
    assert repr(again) == "DatabaseNetwork(db1 (3)–db2 (3)–db3 (3), 35 queries, 3 syncs)"


def test_a_network_built_in_a_file_is_written_as_it_changes(tmp_path):
    network = _build(tmp_path / "live.sqlite")
    network.save(tmp_path / "live.sqlite")  # saving onto itself changes nothing
    assert _state(DatabaseNetwork.open(tmp_path / "live.sqlite")) == _state(network)
    standalone = ProtocolDatabase(tmp_path / "one.sqlite", name="reference")
    standalone.add(WEATHER)
    standalone.add(TAXI)
    assert ProtocolDatabase(tmp_path / "one.sqlite", name="reference").hashes() == (WEATHER.hash, TAXI.hash)


def test_same_steps_same_databases_same_file(tmp_path):
    first, second = _build(), _build()
    assert _state(first) == _state(second)
    first.save(tmp_path / "first.sqlite")
    second.save(tmp_path / "second.sqlite")
    dumps = [list(sqlite3.connect(tmp_path / f"{n}.sqlite").iterdump()) for n in ("first", "second")]
    assert dumps[0] == dumps[1]
    assert (tmp_path / "first.sqlite").read_bytes() == (tmp_path / "second.sqlite").read_bytes()


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"size": 0}, "size: 0 must be a whole number from 1 to 100: the number of databases"),
        ({"size": 2.5}, "size: 2.5 must be a whole number"),
        ({"sync_interval": 0}, "sync_interval: 0 must be a whole number from 1 to 1000000: the number of queries"),
        ({"sync_interval": True}, "sync_interval: True must be a whole number"),
        ({"path": "/no/such/folder/agora.sqlite"}, "path: cannot use '/no/such/folder/agora.sqlite' as an SQLite"),
    ],
)
def test_bad_parameters_are_clear_errors(parameters, message):
    with pytest.raises(ParameterError, match=message):
        DatabaseNetwork(**parameters)


def test_opening_and_naming_mistakes_are_clear_errors(tmp_path):
    with pytest.raises(ParameterError, match="is not a file; save a network there first"):
        DatabaseNetwork.open(tmp_path / "missing.sqlite")
    (tmp_path / "notes.txt").write_text("not a database, just some notes that are long enough " * 40)
    with pytest.raises(ParameterError, match="cannot use .*notes.txt' as an SQLite file"):
        DatabaseNetwork.open(tmp_path / "notes.txt")
    ProtocolDatabase(tmp_path / "one.sqlite", name="reference").add(WEATHER)
    with pytest.raises(ParameterError, match="holds no network of protocol databases"):
        DatabaseNetwork.open(tmp_path / "one.sqlite")
    _build(tmp_path / "net.sqlite", queries=0)
    with pytest.raises(ParameterError, match="already holds protocol databases; reopen them with"):
        DatabaseNetwork(tmp_path / "net.sqlite")
    for name in ("", "db 1", "a/b", 1):
        with pytest.raises(ParameterError, match="name: .* must be 1 to 64 letters"):
            ProtocolDatabase(name=name)


def test_agents_on_several_threads_count_every_query_and_every_sync():
    network = DatabaseNetwork(sync_interval=10)
    network["db1"].add(WEATHER)

    def agent():
        for _ in range(50):
            network.query_executed()
            network["db2"].search("weather")

    threads = [threading.Thread(target=agent) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (network.queries, network.syncs) == (200, 20) and WEATHER.hash in network["db3"]
