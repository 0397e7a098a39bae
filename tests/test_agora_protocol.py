"""Agora's protocol layer (Agora paper, §4.1, §5.1, Appendix B): hashes, documents and their front matter, data URIs,
fetching with the hash check, and B.1's envelopes and responses, where every malformed input is a ProtocolError."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordkit.agora.protocol import (
    Envelope,
    ProtocolDocument,
    ProtocolError,
    Reference,
    Response,
    WellKnown,
    checked_hash,
    fetch,
    from_data_uri,
    http_get,
    protocol_hash,
    to_data_uri,
)
from coordkit.paths import DATA

APPENDIX_C = (DATA / "agora" / "weather_forecast_protocol.txt").read_text()
WEATHER = ProtocolDocument.compose(
    APPENDIX_C.split("\n", 4)[4],  # the paper's Name: and Description: lines become the front matter
    name="Weather Forecast Query Protocol",
    description="A protocol for querying the weather forecast for a given date and location.",
)
HELLO = "qvTGHdzF6KLavt4PO0gs2a6pQ00="


def test_the_hash_is_base64_of_sha1_of_the_utf8_text():
    # SHA-1("hello") = aaf4c61d dcc5e8a2 dabede0f 3b482cd9 aea9434d (the standard test value). In base64 the first
    # three bytes aa f4 c6 = 101010 101111 010011 000110 = 42, 47, 19, 6 = "q", "v", "T", "G"; 20 bytes make 27
    # characters and one "=" of padding.
    assert protocol_hash("hello") == HELLO
    assert protocol_hash("") == "2jmj7l5rSw0yVb/vlWAYkK/YBwk="  # SHA-1 of nothing: da39a3ee 5e6b4b0d ...
    assert protocol_hash("°C") == "oXhmVz4FcjGJz942K5KYLg9dV/o="  # the UTF-8 bytes c2 b0 43, SHA-1 a17866573e05...
    assert protocol_hash(APPENDIX_C) == "1UH2/jknSKk+POlNbpjUQyO/Rmc="  # obtained once: a regression check


def test_no_normalisation_one_byte_is_another_document():
    assert len({protocol_hash(t) for t in ("hello", "hello\n", "Hello", " hello", "hello\r\n")}) == 5


def test_the_hex_form_of_the_website_is_refused_with_the_reason():
    with pytest.raises(ProtocolError, match="SHA-1 in hex.*base64"):
        checked_hash("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d", "protocolHash")
    for bad in ("qvTGHdzF6KLavt4PO0gs2a6pQ0=", "qvTGHdzF6KLavt4PO0gs2a6pQ01=", "qvTGHdzF6KLavt4PO0gs2a6pQ00", None, 3):
        with pytest.raises(ProtocolError, match="protocolHash: .* is not a protocol hash"):
            checked_hash(bad, "protocolHash")
    with pytest.raises(ProtocolError, match="text, not bytes"):
        protocol_hash(b"hello")


def test_appendix_c_composed_with_its_metadata():
    assert WEATHER.name == "Weather Forecast Query Protocol"
    assert WEATHER.description.startswith("A protocol for querying") and WEATHER.references == ()
    assert WEATHER.body.startswith("Input Message") and WEATHER.body.endswith("```\n")
    assert WEATHER.text.startswith("---\nname: Weather Forecast Query Protocol\ndescription: A protocol")
    assert WEATHER.hash == protocol_hash(WEATHER.text) != protocol_hash(APPENDIX_C)
    assert ProtocolDocument(WEATHER.text) == WEATHER  # parsed back from its text alone


def test_a_plain_text_is_a_document_without_metadata():
    plain = ProtocolDocument(APPENDIX_C)  # the paper's Name: line is prose, not front matter
    assert (plain.name, plain.description, plain.references, plain.body) == (None, None, (), APPENDIX_C)


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: X\n",  # never closed
        "---\n---\nbody",  # empty
        "---\nName: X\n---\nbody",  # keys are lower case
        "---\nversion: 2\n---\nbody",  # not a key the kit reads
        "---\nname: X\nname: Y\n---\nbody",  # twice
        "---\nname:  X\n---\nbody",  # a value with a leading space
        f"---\nreference: {HELLO}\n---\nbody",  # a reference without a source
        "---\nreference: abc https://a/pd\n---\nbody",  # not a hash
        "\n---\nname: X\n---\nbody",  # not on the first line
    ],
)
def test_a_malformed_front_matter_is_plain_text(text):
    document = ProtocolDocument(text)
    assert (document.name, document.references, document.body) == (None, (), text)


def test_references_to_other_documents_by_hash_and_sources():
    weather = Reference(WEATHER.hash, ("https://db1.example/protocol?id=x", WEATHER.data_uri))
    trip = ProtocolDocument.compose(
        "Send a trip; the weather comes by the referenced protocol.",
        name="Trip",
        references=[weather, Reference(HELLO, ("https://b.example/hello",))],
    )
    assert ProtocolDocument(trip.text).references == (weather, Reference(HELLO, ("https://b.example/hello",)))
    assert f"\nreference: {WEATHER.hash} https://db1.example/protocol?id=x data:text/plain" in trip.text


def test_compose_refuses_what_it_could_not_read_back():
    with pytest.raises(ProtocolError, match="name: 'two\\\\nlines' must be one line"):
        ProtocolDocument.compose("body", name="two\nlines")
    with pytest.raises(ProtocolError, match="description: ' padded' must be one line .* no leading"):
        ProtocolDocument.compose("body", description=" padded")
    with pytest.raises(ProtocolError, match="body: it begins with a front-matter block"):
        ProtocolDocument.compose("---\nname: hidden\n---\nbody")
    with pytest.raises(ProtocolError, match="is not a Reference"):
        ProtocolDocument.compose("body", references=[HELLO])
    with pytest.raises(ProtocolError, match="reference sources is empty"):
        Reference(HELLO, ())
    with pytest.raises(ProtocolError, match="text, not dict"):
        ProtocolDocument.compose({"date": "YYYY-MM-DD"}, name="Weather")
    assert ProtocolDocument.compose("just text").text == "just text"


def test_data_uri_literal_case():
    assert to_data_uri("a b%,#?&+/\n°") == "data:text/plain;charset=utf-8,a%20b%25%2C%23%3F%26%2B%2F%0A%C2%B0"
    assert from_data_uri("DATA:text/plain;charset=UTF-8,%C2%B0C") == "°C"


@given(st.text())
def test_data_uri_round_trip_for_any_text(text):
    uri = to_data_uri(text)
    assert from_data_uri(uri) == text
    assert all(c.isascii() and not c.isspace() for c in uri)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("https://a.example/pd", "not a data URI of plain text"),
        ("data:text/plain;base64,aGVsbG8=", "not a data URI of plain text"),
        ("data:text/plain;charset=utf-8,50%", "'%' at character 32 is not followed by two hex digits"),
        ("data:text/plain;charset=utf-8,%zz", "not followed by two hex digits"),
        ("data:text/plain;charset=utf-8,%C2", "percent-escapes are not UTF-8"),
        (None, "None is not a data URI"),
    ],
)
def test_a_bad_data_uri_is_refused(uri, message):
    with pytest.raises(ProtocolError, match=message):
        from_data_uri(uri)


def test_fetch_reads_data_uris_and_asks_the_fetcher_for_the_rest():
    asked = []

    def fetcher(uri):
        asked.append(uri)
        if uri == "https://down.example/pd":
            raise OSError("connection refused")
        return {"https://tampered.example/pd": WEATHER.text + " ", "https://good.example/pd": WEATHER.text}[uri]

    sources = ["https://down.example/pd", "https://tampered.example/pd", "https://good.example/pd"]
    assert fetch(sources, WEATHER.hash, fetcher=fetcher) == WEATHER
    assert asked == sources  # in order, and past a source that is down or gives another text
    assert fetch([WEATHER.data_uri], WEATHER.hash, fetcher=asked.append) == WEATHER and len(asked) == 3


def test_a_mismatched_hash_is_refused_with_the_hash_the_source_and_what_was_received():
    tampered = WEATHER.text.replace("°C", "°F")
    with pytest.raises(ProtocolError) as refused:
        fetch(["https://evil.example/pd"], WEATHER.hash, fetcher=lambda uri: tampered)
    message = str(refused.value)
    assert f"refused protocol document {WEATHER.hash}" in message and "'https://evil.example/pd' gave" in message
    assert f"{len(tampered)} characters '---\\nname: Weather" in message
    assert f"whose hash is {protocol_hash(tampered)}" in message and "Nothing was stored" in message
    with pytest.raises(ProtocolError, match="gave bytes, not text"):
        fetch(["https://a.example/pd"], WEATHER.hash, fetcher=lambda uri: WEATHER.text.encode())
    with pytest.raises(ProtocolError, match="sources is empty"):
        fetch([], WEATHER.hash)
    with pytest.raises(ProtocolError, match="expected_hash: .* is not a protocol hash"):
        fetch([WEATHER.data_uri], "weather")


def test_fetch_refuses_a_text_with_a_lone_surrogate_and_tries_the_next_source():
    broken = "data:text/plain;charset=utf-8,a\ud800b"  # a JSON envelope can carry it as "\\ud800"
    assert fetch([broken, WEATHER.data_uri], WEATHER.hash) == WEATHER
    assert fetch(["https://a.example/pd", WEATHER.data_uri], WEATHER.hash, fetcher=lambda uri: "\udcff") == WEATHER
    with pytest.raises(ProtocolError) as refused:
        fetch([broken], WEATHER.hash)
    assert "gave 3 characters: the text is not valid Unicode: a lone surrogate '\\ud800' at character 1" in str(
        refused.value
    )
    with pytest.raises(ProtocolError, match="not valid Unicode: a lone surrogate '.udcff' at character 0"):
        ProtocolDocument("\udcff")


class _Documents(BaseHTTPRequestHandler):
    texts = {"/pd": WEATHER.text, "/tampered": WEATHER.text + "\n"}

    def do_GET(self):
        text = self.texts.get(self.path)
        self.send_response(200 if text else 404)
        self.end_headers()
        self.wfile.write((text or "not found").encode())

    def log_message(self, *args):
        pass


def test_http_get_over_a_local_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Documents)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert fetch([f"{base}/missing", f"{base}/pd"], WEATHER.hash) == WEATHER  # a 404 is an OSError: next
        with pytest.raises(ProtocolError, match="/tampered' gave"):
            fetch([f"{base}/tampered"], WEATHER.hash)
        with pytest.raises(ValueError, match="a fetcher reads http"):
            http_get("ftp://127.0.0.1/pd")
    finally:
        server.shutdown()
        server.server_close()


def test_envelopes_in_json_both_ways():
    natural = Envelope.natural_language("What is the weather forecast for London, UK on 2024-09-27?")
    assert json.loads(natural.to_json()) == {
        "protocolHash": None,
        "protocolSources": [],
        "body": "What is the weather forecast for London, UK on 2024-09-27?",
    }
    query = Envelope.in_protocol(WEATHER, '{"location": "London, UK", "date": "2024-09-27"}')
    assert query.protocol_sources == (WEATHER.data_uri,)  # no URL: the document travels with the query
    for envelope in (natural, query, Envelope(WEATHER.hash, ["https://db1.example/pd"], "{}")):
        assert Envelope.from_json(envelope.to_json()) == envelope
        assert Envelope.from_json(envelope.to_json().encode()) == envelope
    assert Envelope.from_json(json.loads(query.to_json())) == query


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"protocolHash": null, "protocolSources": ["https://a/pd"], "body": "hi"}', "null protocolHash"),
        (f'{{"protocolHash": "{HELLO}", "protocolSources": [], "body": "hi"}}', "needs at least one source"),
        ('{"protocolHash": "weather", "protocolSources": ["https://a/pd"], "body": "hi"}', "protocolHash: 'weather'"),
        ('{"protocolHash": null, "protocolSources": "https://a/pd", "body": "hi"}', "not a JSON array"),
        (f'{{"protocolHash": "{HELLO}", "protocolSources": ["a b"], "body": "hi"}}', "'a b' is not a source URI"),
        ('{"protocolHash": null, "protocolSources": [], "body": {"location": "London"}}', "B.1: send it as a string"),
        ('{"protocolHash": null, "protocolSources": []}', "the field body is missing"),
        ('{"protocol_hash": null, "protocolSources": [], "body": ""}', "unknown field 'protocol_hash'"),
        ('["protocolHash"]', "is not a JSON object"),
        ('{"protocolHash": null,', "not JSON .* at line 1, column 23"),
        (b"\xff{}", "not UTF-8"),
        (42, "42 is not a JSON object"),
    ],
)
def test_a_malformed_envelope_is_a_clear_error(data, message):
    with pytest.raises(ProtocolError, match=message):
        Envelope.from_json(data)


def test_responses_follow_b1():
    for response, wire in [
        (Response.success('{"temperature": 11}'), {"status": "success", "body": '{"temperature": 11}'}),
        (Response.success("error: unknown location"), {"status": "success", "body": "error: unknown location"}),
        (Response.failure("the LLM did not answer"), {"status": "failure", "body": "the LLM did not answer"}),
        (Response.rejected(), {"status": "rejected"}),  # B.1: one field
    ]:
        assert json.loads(response.to_json()) == wire and Response.from_json(response.to_json()) == response


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"status": "ok", "body": ""}', "status: 'ok' is none of success, failure, rejected"),
        ('{"status": "error", "message": "x"}', "unknown field 'message'"),  # the demo's error form
        ('{"status": "success"}', "body is missing .* status 'success'"),
        ('{"status": "failure", "body": null}', "failure carries a string body"),
        ('{"status": "rejected", "body": "no"}', "a rejection is .* alone"),
        ('{"body": "x"}', "the field status is missing"),
    ],
)
def test_a_malformed_response_is_a_clear_error(data, message):
    with pytest.raises(ProtocolError, match=message):
        Response.from_json(data)


def test_the_wellknown_listing():
    listing = WellKnown({WEATHER.hash: ["https://bob.example/pd"], HELLO: ("https://b/hello", "https://c/hello")})
    assert WEATHER.hash in listing and listing.protocols[HELLO] == ("https://b/hello", "https://c/hello")
    assert WellKnown.from_json(listing.to_json()) == listing
    assert json.loads(listing.to_json()) == {
        WEATHER.hash: ["https://bob.example/pd"],
        HELLO: ["https://b/hello", "https://c/hello"],
    }
    assert listing.common([HELLO, "elsewhere", WEATHER.hash]) == (WEATHER.hash, HELLO)  # in the listing's order
    assert listing.common([]) == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"status": "success", "protocols": {}}', "B.3's listing is the object .* itself"),
        (f'{{"{HELLO}": []}}', "sources of .* is empty"),
        (f'{{"{HELLO}": "https://a/pd"}}', "is not a JSON array"),
        ('{"hello": ["https://a/pd"]}', "/.wellknown key: 'hello' is not a protocol hash"),
        ("[]", "is not a JSON object"),
    ],
)
def test_a_malformed_listing_is_a_clear_error(data, message):
    with pytest.raises(ProtocolError, match=message):
        WellKnown.from_json(data)


@given(st.one_of(st.text(), st.binary(), st.dictionaries(st.text(), st.one_of(st.none(), st.text(), st.integers()))))
def test_any_input_is_parsed_or_refused_never_a_crash(data):
    for parse in (Envelope.from_json, Response.from_json, WellKnown.from_json):
        try:
            parse(data)
        except ProtocolError:
            pass
