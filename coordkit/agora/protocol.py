"""Agora's protocol layer (Agora paper, §4.1, §5.1 and Appendix B): documents, hashes, sources and transactions.

A *protocol document* (PD) is plain text that describes a protocol (§4.1); it is identified by its hash, so that no
central body assigns names. Sources say where a document can be downloaded: URLs, or ``data:`` URIs that carry the
text itself, URL-quoted (the kit's and the paper's form) or in base64 (``data:text/plain;charset=utf-8;base64,``,
which the official library ``agora-protocol`` 0.2.0 also reads: ``agora/utils.py``, ``download_and_verify_protocol``).
A receiver fetches the document from a source and keeps it only if its hash matches (§5.1). A download is capped at
MAX_DOCUMENT_BYTES (1,000,000); the library has no cap, so no number would match it: the kit keeps its cap, which
bounds what a stranger's URL can make an agent read (the paper's documents are a few kilobytes), and says so when a
source sends more. A document carried in a data URI is bounded by the request's own cap instead (transport.py).

A *transaction* (Appendix B.1) is a JSON envelope ``{"protocolHash", "protocolSources", "body"}`` answered by
``{"status", "body"}``; an agent lists the protocols it supports at ``/.wellknown`` (Appendix B.3).

Metadata (Appendix D.1: "the name or a short description of the protocol") lives *in* the document, so that it
travels with the text and is covered by the hash, in a front-matter block::

    ---
    name: Weather Forecast Query Protocol
    description: A protocol for querying the weather forecast for a given date and location.
    reference: <hash> <source> [<source> ...]
    ---
    <the protocol's text>

The block is recognised only when it is well formed: the first line is ``---``; every line up to the next ``---``
reads ``key: value`` with ``name`` or ``description`` (at most once each, one line, no surrounding spaces) or
``reference`` (any number: a hash and at least one source, separated by single spaces: B.2's preamble, by which a
document refers to others); the body is everything after the closing line. Any other text is a plain document
with no metadata: every text is a valid PD (§4.1). The paper's demo kept name and description beside the text
instead, outside the hash.

The official library reads front matter more loosely (``agora/utils.py``, ``extract_metadata``): the text between the
first ``---`` anywhere and the next one, read as YAML, with a ``multiround`` key beside ``name`` and ``description``.
:func:`library_front_matter` reads a document as the library does, for documents that come from the library's
agents (CRLF line ends, trailing spaces, quoted values, a block after blank lines); :class:`ProtocolDocument` keeps
the strict form above, so that what the kit writes and reads back is unchanged.
"""

import base64
import binascii
import hashlib
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DATA_URI_PREFIX = "data:text/plain;charset=utf-8,"
BASE64_DATA_URI_PREFIX = "data:text/plain;charset=utf-8;base64,"  # the one base64 form the library reads
LIBRARY_METADATA_DEFAULTS = {"name": "Unnamed protocol", "description": "No description provided", "multiround": False}
MAX_DOCUMENT_BYTES = 1_000_000  # what http_get reads at most: a source cannot make an agent swallow gigabytes
STATUSES = ("success", "failure", "rejected")
FRONT_MATTER_KEYS = ("name", "description", "reference")

_SOURCE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")  # a URI with a scheme and no whitespace
_METADATA_LINE = re.compile(r"([a-z]+): (\S(?:.*\S)?)")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_YAML_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?")
_YAML_BOOLEANS = {
    word: truth
    for truth, words in ((True, ("yes", "true", "on")), (False, ("no", "false", "off")))
    for base in words
    for word in (base, base.capitalize(), base.upper())
}


class ProtocolError(ValueError):
    """A malformed hash, source, document, envelope, response or listing, or a document refused on its hash."""


def protocol_hash(text: str) -> str:
    """The document's identifier: base64 of the SHA-1 digest of its UTF-8 bytes, with no normalisation (B.2).

    28 characters that may contain ``+``, ``/`` and end in ``=``. Agora's website describes the hash in hex; its
    official library and the paper's demo use base64, and so does the kit. One changed byte (a trailing newline,
    a space) is a different document. A text that UTF-8 cannot carry (a lone surrogate) has no hash: a ProtocolError.
    """
    if not isinstance(text, str):
        raise ProtocolError(f"a protocol document is text, not {type(text).__name__}: decode it as UTF-8 first")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ProtocolError(
            f"the text is not valid Unicode: a lone surrogate {text[error.start]!r} at character {error.start}, which "
            f"UTF-8 cannot carry; a protocol document is UTF-8 text (decode its bytes with errors='strict')"
        ) from None
    return base64.b64encode(hashlib.sha1(data).digest()).decode("ascii")


def checked_hash(value: Any, field_name: str) -> str:
    """``value`` if it is a protocol hash as :func:`protocol_hash` writes it; otherwise a ProtocolError."""
    if isinstance(value, str) and len(value) == 28:
        try:
            digest = base64.b64decode(value, validate=True)
        except binascii.Error:
            digest = b""
        if len(digest) == 20 and base64.b64encode(digest).decode("ascii") == value:
            return value
    hint = "compute it with protocol_hash(text)"
    if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{40}", value):
        hint = "this is SHA-1 in hex (as Agora's website writes it); the library and the kit use base64: " + hint
    raise ProtocolError(
        f"{field_name}: {_preview(value)} is not a protocol hash (28 characters of base64 encoding the 20-byte "
        f"SHA-1 of the document's UTF-8 text); {hint}"
    )


def checked_sources(value: Any, field_name: str, *, allow_empty: bool) -> tuple[str, ...]:
    """``value`` as a tuple of source URIs (``https://…``, ``data:…``), each with a scheme and no whitespace."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ProtocolError(f"{field_name}: {_preview(value)} is not a list of sources; write [{_preview(value)}]")
    sources = tuple(value)
    for source in sources:
        if not (isinstance(source, str) and _SOURCE.fullmatch(source)):
            raise ProtocolError(
                f"{field_name}: {_preview(source)} is not a source URI (a scheme such as https: or data:, then no "
                f"whitespace); send a document's text as to_data_uri(text)"
            )
    if not sources and not allow_empty:
        raise ProtocolError(f"{field_name} is empty; give at least one source, e.g. to_data_uri(text)")
    return sources


def to_data_uri(text: str) -> str:
    """``data:text/plain;charset=utf-8,`` and the URL-quoted UTF-8 text: a source that carries the document."""
    protocol_hash(text)  # the same type check
    return DATA_URI_PREFIX + urllib.parse.quote(text, safe="")


def is_data_uri(source: str) -> bool:
    """Whether ``source`` is a data URI of plain text, URL-quoted or in base64 (the media type in any case)."""
    return _is_base64(source) or source[: len(DATA_URI_PREFIX)].lower() == DATA_URI_PREFIX


def _is_base64(source: str) -> bool:
    """Whether ``source`` begins with BASE64_DATA_URI_PREFIX (compared without regard to case). The library reads
    no other base64 form (``data:text/plain;base64,`` is "unsupported" there), and neither does the kit."""
    return source[: len(BASE64_DATA_URI_PREFIX)].lower() == BASE64_DATA_URI_PREFIX


def from_data_uri(uri: str) -> str:
    """The text a data URI carries: URL-quoted as :func:`to_data_uri` writes it, or in base64 as the official library
    also reads it (``agora/utils.py``, ``download_and_verify_protocol``); the media type is compared in any case."""
    if not isinstance(uri, str) or not is_data_uri(uri):
        raise ProtocolError(
            f"{_preview(uri)} is not a data URI of plain text; it must begin with {DATA_URI_PREFIX} (URL-quoted "
            f"text) or {BASE64_DATA_URI_PREFIX} (base64)"
        )
    if _is_base64(uri):
        return _from_base64(uri[len(BASE64_DATA_URI_PREFIX) :], len(BASE64_DATA_URI_PREFIX))
    quoted = uri[len(DATA_URI_PREFIX) :]
    bad = _BAD_PERCENT.search(quoted)
    if bad:
        raise ProtocolError(
            f"data URI: '%' at character {len(DATA_URI_PREFIX) + bad.start()} is not followed by two hex digits; "
            f"quote the text with to_data_uri(text)"
        )
    try:
        return urllib.parse.unquote(quoted, errors="strict")
    except UnicodeDecodeError as error:
        raise ProtocolError(f"data URI: its percent-escapes are not UTF-8 ({error.reason}); use to_data_uri") from None


def _from_base64(encoded: str, offset: int) -> str:
    """The UTF-8 text of a base64 data URI's payload, which begins at character ``offset`` of the URI."""
    try:
        data = base64.b64decode(encoded, validate=True)
    except binascii.Error as error:
        raise ProtocolError(
            f"data URI: the base64 payload from character {offset} is not base64 ({error}); encode the UTF-8 text "
            f"with base64.b64encode, or send to_data_uri(text)"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProtocolError(
            f"data URI: its base64 payload is not UTF-8 text ({error.reason} at byte {error.start}); a protocol "
            f"document is UTF-8 text"
        ) from None


@dataclass(frozen=True)
class Reference:
    """A document's reference to another document: its hash and where to fetch it (B.2)."""

    hash: str
    sources: tuple[str, ...]

    def __post_init__(self):
        checked_hash(self.hash, "reference hash")
        object.__setattr__(self, "sources", checked_sources(self.sources, "reference sources", allow_empty=False))


@dataclass(frozen=True)
class ProtocolDocument:
    """A protocol document: its exact ``text`` (what is hashed), and what its front matter says (module docstring).

    Every string is a document; :meth:`compose` writes one with metadata and checks it.
    """

    text: str
    hash: str = field(init=False)
    name: str | None = field(init=False, compare=False)
    description: str | None = field(init=False, compare=False)
    references: tuple[Reference, ...] = field(init=False, compare=False)
    body: str = field(init=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "hash", protocol_hash(self.text))
        metadata, body = _front_matter(self.text) or ({}, self.text)
        object.__setattr__(self, "name", metadata.get("name"))
        object.__setattr__(self, "description", metadata.get("description"))
        object.__setattr__(self, "references", tuple(metadata.get("reference", ())))
        object.__setattr__(self, "body", body)

    @classmethod
    def compose(
        cls,
        body: str,
        *,
        name: str | None = None,
        description: str | None = None,
        references: Iterable[Reference] = (),
    ) -> "ProtocolDocument":
        """A document with ``body`` and, when given, a front matter holding the metadata and references."""
        protocol_hash(body)  # the type check: a body is text
        references = tuple(references)
        metadata = (("name", name), ("description", description))
        lines = [f"{key}: {_checked_line(value, key)}" for key, value in metadata if value is not None]
        for reference in references:
            if not isinstance(reference, Reference):
                raise ProtocolError(f"references: {_preview(reference)} is not a Reference(hash, sources)")
            lines.append(f"reference: {reference.hash} {' '.join(reference.sources)}")
        text = "\n".join(["---", *lines, "---", body]) if lines else body
        document = cls(text)
        parsed = (document.body, document.name, document.description, document.references)
        if parsed != (body, name, description, references):
            raise ProtocolError("body: it begins with a front-matter block of its own; start it with another line")
        return document

    @property
    def data_uri(self) -> str:
        return to_data_uri(self.text)

    def __repr__(self) -> str:
        return f"ProtocolDocument(hash={self.hash!r}, name={self.name!r}, {len(self.text)} characters)"


def _checked_line(value: Any, key: str) -> str:
    if not (isinstance(value, str) and _METADATA_LINE.fullmatch(f"{key}: {value}")):
        raise ProtocolError(f"{key}: {_preview(value)} must be one line of text with no leading or trailing spaces")
    return value


def _front_matter(text: str) -> tuple[dict[str, Any], str] | None:
    """The metadata and the body if ``text`` opens with a well-formed front-matter block, else None."""
    lines = text.split("\n")
    if lines[0] != "---" or "---" not in lines[1:]:
        return None
    end = lines.index("---", 1)
    metadata: dict[str, Any] = {}
    for line in lines[1:end]:
        match = _METADATA_LINE.fullmatch(line)
        if not match or match[1] not in FRONT_MATTER_KEYS:
            return None
        key, value = match[1], match[2]
        if key != "reference":
            if key in metadata:
                return None
            metadata[key] = value
            continue
        parts = value.split(" ")
        try:
            metadata.setdefault("reference", []).append(Reference(parts[0], tuple(parts[1:])))
        except ProtocolError:
            return None
    return (metadata, "\n".join(lines[end + 1 :])) if metadata else None


def library_front_matter(text: str) -> dict[str, Any] | None:
    """``name``, ``description`` and ``multiround`` as the official library reads them (``agora/utils.py``,
    ``extract_metadata``), or None when the library cannot read any (it raises on such a text).

    The library takes the text between the first ``---`` anywhere and the next ``---``, strips it, and reads it as
    YAML; a missing key gets the library's default (LIBRARY_METADATA_DEFAULTS). The kit reads the part of YAML that
    front matter uses: one ``key: value`` a line (any line ends), plain, ``'single'`` or ``"double"``-quoted
    scalars, YAML 1.1's booleans and nulls, integers, ``#`` comments. A block in other YAML (lists, nested maps,
    values over several lines) is a ProtocolError naming the line.
    """
    protocol_hash(text)  # the type check
    start = text.find("---")
    end = text.find("---", start + 3)
    if start == -1 or end == -1:
        return None
    block = text[start + 3 : end].strip()
    fields = {}
    for number, line in enumerate(block.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _YAML_LINE.fullmatch(line)
        if match is None:
            raise ProtocolError(
                f"front matter line {number}: {_preview(line)} is not 'key: value'; the kit reads the library's front "
                f"matter as one 'key: value' a line (write lists and nested maps in the body)"
            )
        fields[match[1]] = _yaml_scalar(match[2] or "", number)
    if not fields:
        return None  # yaml.safe_load gives None (or a bare scalar), and the library's .get raises
    return {key: fields.get(key, default) for key, default in LIBRARY_METADATA_DEFAULTS.items()}


def _yaml_scalar(value: str, number: int) -> Any:
    """A YAML 1.1 scalar as PyYAML's ``safe_load`` reads it: quoted text, a boolean, null, an integer, or text."""
    value = value.strip()
    if value[:1] == '"':
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise ProtocolError(
                f'front matter line {number}: {_preview(value)} is not a closed "quoted" value'
            ) from None
    if value[:1] == "'":
        if len(value) < 2 or value[-1] != "'":
            raise ProtocolError(f"front matter line {number}: {_preview(value)} is not a closed 'quoted' value")
        return value[1:-1].replace("''", "'")
    value = re.sub(r"\s+#.*", "", value)
    if value in _YAML_BOOLEANS:
        return _YAML_BOOLEANS[value]
    if value in ("", "~", "null", "Null", "NULL"):
        return None
    return int(value.replace("_", "")) if re.fullmatch(r"[-+]?(0|[1-9][0-9_]*)", value) else value


def http_get(uri: str, *, timeout_s: float = 10.0) -> str:
    """The text at an ``http(s)`` URI (UTF-8, at most MAX_DOCUMENT_BYTES); OSError or ValueError if it cannot."""
    if not uri.lower().startswith(("http://", "https://")):
        raise ValueError(f"cannot download {_preview(uri)}: a fetcher reads http(s) sources; data: URIs need none")
    with urllib.request.urlopen(uri, timeout=timeout_s) as response:
        content = response.read(MAX_DOCUMENT_BYTES + 1)
    if len(content) > MAX_DOCUMENT_BYTES:
        raise ValueError(
            f"source {uri} sent more than MAX_DOCUMENT_BYTES ({MAX_DOCUMENT_BYTES:,} bytes), which no protocol "
            f"document needs; the kit reads no more (the official library has no cap): shorten the document, split "
            f"it into documents that refer to each other (B.2's reference), or send it in a data URI"
        )
    return content.decode("utf-8")


def fetch(sources: Iterable[str], expected_hash: str, *, fetcher: Callable[[str], str] = http_get) -> ProtocolDocument:
    """The document whose hash is ``expected_hash``, from the first of ``sources`` that gives it (§5.1, B.1).

    ``data:`` sources are read in place; the others through ``fetcher(uri) -> text``, which raises OSError or
    ValueError when it cannot. A text whose hash differs is refused and the next source tried; when no source
    gives the document, a ProtocolError names the hash and what each source gave. Nothing is stored here: the
    caller stores only what this returns.
    """
    expected_hash = checked_hash(expected_hash, "expected_hash")
    problems = []
    for source in checked_sources(sources, "sources", allow_empty=False):
        try:
            text = from_data_uri(source) if is_data_uri(source) else fetcher(source)
        except (OSError, ValueError) as error:
            problems.append(f"{_preview(source)} could not be read ({error})")
            continue
        if not isinstance(text, str):
            problems.append(f"{_preview(source)} gave {type(text).__name__}, not text")
            continue
        try:
            received = protocol_hash(text)
        except ProtocolError as error:  # a lone surrogate
            problems.append(f"{_preview(source)} gave {len(text)} characters: {error}")
            continue
        if received == expected_hash:
            return ProtocolDocument(text)
        problems.append(f"{_preview(source)} gave {len(text)} characters {_preview(text)} whose hash is {received}")
    raise ProtocolError(
        f"refused protocol document {expected_hash}: no source gave a text with that hash; "
        + "; ".join(problems)
        + ". Nothing was stored: ask the sender for a source that holds the document it named"
    )


@dataclass(frozen=True)
class Envelope:
    """A request (B.1): the protocol's hash and sources and a body, or natural language (no hash, no sources)."""

    protocol_hash: str | None
    protocol_sources: tuple[str, ...]
    body: str

    def __post_init__(self):
        if self.protocol_hash is not None:
            checked_hash(self.protocol_hash, "protocolHash")
        sources = checked_sources(self.protocol_sources, "protocolSources", allow_empty=True)
        object.__setattr__(self, "protocol_sources", sources)
        if self.protocol_hash is None and sources:
            raise ProtocolError(
                f"protocolSources: {_preview(list(sources))} with a null protocolHash; B.1: natural language has no "
                f"sources; send [] or give the hash of the document they hold"
            )
        if self.protocol_hash is not None and not sources:
            raise ProtocolError(
                f"protocolSources: [] with protocolHash {self.protocol_hash}; B.1: a protocol needs at least one "
                f"source; add to_data_uri(text) if the document has no URL"
            )
        if not isinstance(self.body, str):
            raise ProtocolError(f"body: {_preview(self.body)} is {type(self.body).__name__}; B.1: send it as a string")

    @classmethod
    def natural_language(cls, body: str) -> "Envelope":
        return cls(None, (), body)

    @classmethod
    def in_protocol(cls, document: ProtocolDocument, body: str, sources: Iterable[str] = ()) -> "Envelope":
        """A request in ``document``'s protocol; with no sources given, the document travels as a data URI."""
        return cls(document.hash, checked_sources(sources, "sources", allow_empty=True) or (document.data_uri,), body)

    def to_json(self) -> str:
        fields = {"protocolHash": self.protocol_hash, "protocolSources": list(self.protocol_sources)}
        return json.dumps(fields | {"body": self.body}, ensure_ascii=False)

    @classmethod
    def from_json(cls, data: str | bytes | Mapping) -> "Envelope":
        fields = _json_object(data, "envelope", ("protocolHash", "protocolSources", "body"))
        sources = fields["protocolSources"]
        if not isinstance(sources, list):
            raise ProtocolError(f'protocolSources: {_preview(sources)} is not a JSON array; send [] or ["https://…"]')
        return cls(fields["protocolHash"], tuple(sources), fields["body"])


@dataclass(frozen=True)
class Response:
    """A reply (B.1). ``success``: the protocol was followed, and an error that the protocol prescribes travels
    in the body; ``failure``: an error the protocol does not cover (the LLM or a tool failed), the body says what;
    ``rejected``: the receiver cannot use the protocol (it could not fetch the document, or will not follow it),
    and, as B.1 has it, the reply has no other field.
    """

    status: str
    body: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ProtocolError(f"status: {_preview(self.status)} is none of {', '.join(STATUSES)}")
        if self.status == "rejected" and self.body is not None:
            raise ProtocolError(
                f'body: {_preview(self.body)} in a rejection; B.1: a rejection is {{"status": "rejected"}} alone '
                f"(an error the protocol prescribes is a success whose body says it)"
            )
        if self.status != "rejected" and not isinstance(self.body, str):
            raise ProtocolError(
                f"body: {_preview(self.body)} with status {self.status}; B.1: a {self.status} carries a string body"
            )

    @classmethod
    def success(cls, body: str) -> "Response":
        return cls("success", body)

    @classmethod
    def failure(cls, message: str) -> "Response":
        return cls("failure", message)

    @classmethod
    def rejected(cls) -> "Response":
        return cls("rejected")

    def to_json(self) -> str:
        fields = {"status": self.status} | ({} if self.body is None else {"body": self.body})
        return json.dumps(fields, ensure_ascii=False)

    @classmethod
    def from_json(cls, data: str | bytes | Mapping) -> "Response":
        fields = _json_object(data, "response", ("status", "body"), optional=("body",))
        status = fields["status"]
        if status != "rejected" and "body" not in fields:
            raise ProtocolError(f"body is missing from a response with status {_preview(status)}; B.1 requires it")
        return cls(status, fields.get("body"))


@dataclass(frozen=True)
class WellKnown:
    """What an agent serves at ``/.wellknown`` (B.3): each supported protocol's hash and a non-empty source list."""

    protocols: Mapping[str, tuple[str, ...]]

    def __post_init__(self):
        if not isinstance(self.protocols, Mapping):
            raise ProtocolError(f"a /.wellknown listing maps hashes to sources, not {type(self.protocols).__name__}")
        protocols = {}
        for key, sources in self.protocols.items():
            checked_hash(key, "/.wellknown key")
            protocols[key] = checked_sources(sources, f"/.wellknown sources of {key}", allow_empty=False)
        object.__setattr__(self, "protocols", MappingProxyType(protocols))

    def __contains__(self, protocol_hash: object) -> bool:
        return protocol_hash in self.protocols

    def common(self, hashes: Iterable[str]) -> tuple[str, ...]:
        """The listed protocols that are also among ``hashes``, in listing order: a protocol both sides speak (§5.1)."""
        wanted = set(hashes)
        return tuple(h for h in self.protocols if h in wanted)

    def to_json(self) -> str:
        return json.dumps({h: list(sources) for h, sources in self.protocols.items()})

    @classmethod
    def from_json(cls, data: str | bytes | Mapping) -> "WellKnown":
        protocols = _json_object(data, "/.wellknown listing", None)
        if "status" in protocols:  # the demo's GET /wellknown answers {"status": "success", "protocols": {...}}
            raise ProtocolError("/.wellknown: a 'status' key; B.3's listing is the object {hash: [sources]} itself")
        for key, sources in protocols.items():
            if not isinstance(sources, list):
                raise ProtocolError(f"/.wellknown sources of {key}: {_preview(sources)} is not a JSON array of URIs")
        return cls({key: tuple(sources) for key, sources in protocols.items()})


def _json_object(
    data: Any, what: str, fields: tuple[str, ...] | None, optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``data`` (JSON text or an already-parsed mapping) as a dict with exactly ``fields`` (any keys if None)."""
    if isinstance(data, bytes | bytearray):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"{what}: the bytes are not UTF-8 ({error.reason} at byte {error.start})") from None
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as error:
            where = f"line {error.lineno}, column {error.colno}"
            raise ProtocolError(f"{what}: not JSON ({error.msg} at {where})") from None
    if not isinstance(data, Mapping):
        raise ProtocolError(f"{what}: {_preview(data)} is not a JSON object; send {{...}}")
    data = dict(data)
    if fields is None:
        return data
    for key in data:
        if key not in fields:
            raise ProtocolError(f"{what}: unknown field {_preview(key)}; the fields are {', '.join(fields)}")
    for key in fields:
        if key not in data and key not in optional:
            raise ProtocolError(f"{what}: the field {key} is missing; the fields are {', '.join(fields)}")
    return data


def _preview(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "…" + text[-4:]
