"""Protocol databases (Agora paper, Appendix D.1): shared stores of protocol documents, peered in a chain.

The demo added three databases that "host protocol documents": a user submits each protocol it negotiates to its
reference database, and looks there for a suitable protocol once it has talked to a server often enough on a task.
The first database is a peer of the second, the second of the third; "every 10 executed queries" they share their
documents with their peers, which "simulates the propagation of protocol documents between different databases".

- A :class:`ProtocolDatabase` holds documents by hash, each with its sources, in the order they arrived. The hash is
  computed on insert and checked against an expected one when given, and a ``data:`` source must carry the same
  text: a document is never stored under a hash it does not have.
- :meth:`ProtocolDatabase.listing` is the demo's ``GET /``: every document's hash, name and description, which an
  agent's LLM reads to pick candidates. :meth:`ProtocolDatabase.search` is the rule-based counterpart: it ranks the
  documents by how many of a task's keywords their name and description contain (see its docstring).
- A :class:`DatabaseNetwork` is the demo's chain 1–2–3. A *sync* lets every database give its peers the documents
  (and sources) it held when the sync began, so a document moves one hop per sync: added at 1, it is at 2 after
  one sync and at 3 after two, whatever order the databases are visited in. :meth:`DatabaseNetwork.query_executed`
  counts the network's queries and syncs after every ``sync_interval`` of them. D.1 says "one protocol database
  shares" each time without saying which one; the kit lets every database share at once.

Everything lives in one SQLite file (or in memory), written as it changes: a network is saved with
:meth:`DatabaseNetwork.save` and reopened with :meth:`DatabaseNetwork.open`, with the same documents in the same
order and the same counters, so that a run continues as if it had never stopped.
"""

import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from coordkit.agora.protocol import (
    ProtocolDocument,
    ProtocolError,
    checked_hash,
    checked_sources,
    from_data_uri,
    is_data_uri,
    protocol_hash,
)
from coordkit.parameters import ParameterError

SYNC_INTERVAL = 10  # D.1: "Every 10 executed queries"
DATABASES = 3  # D.1: three databases, peered 1–2, 2–3
MAX_DATABASES = 100
MAX_SYNC_INTERVAL = 1_000_000
STOP_WORDS = frozenset("a an and are as at by for from in is of on or the to with".split())

_SCHEMA = """
CREATE TABLE IF NOT EXISTS databases (position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS documents (
    database TEXT NOT NULL, position INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL,
    name TEXT, description TEXT, PRIMARY KEY (database, hash), UNIQUE (database, position));
CREATE TABLE IF NOT EXISTS sources (
    database TEXT NOT NULL, hash TEXT NOT NULL, position INTEGER NOT NULL, uri TEXT NOT NULL,
    PRIMARY KEY (database, hash, position), UNIQUE (database, hash, uri));
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class Store:
    """One SQLite file (or ``":memory:"``) holding one or more protocol databases, with a lock for its writers."""

    def __init__(self, path: str | os.PathLike = ":memory:"):
        self.path = str(path)
        self.lock = threading.RLock()
        try:
            self.connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self.connection.executescript(_SCHEMA)
        except sqlite3.Error as error:
            raise ParameterError(
                f"path: cannot use {self.path!r} as an SQLite file ({error}); give a file path "
                f"in an existing folder, or ':memory:'"
            ) from None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one transaction: committed when the block ends, rolled back if it raises."""
        with self.lock:
            self.connection.execute("BEGIN")
            try:
                yield self.connection
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")

    def rows(self, sql: str, *parameters) -> list[tuple]:
        with self.lock:
            return self.connection.execute(sql, parameters).fetchall()

    def close(self) -> None:
        self.connection.close()


@dataclass(frozen=True)
class Entry:
    """A stored document as a listing shows it: hash, metadata (None when the document has none) and sources."""

    hash: str
    name: str | None
    description: str | None
    sources: tuple[str, ...]


class ProtocolDatabase:
    """A protocol database named ``name`` in a SQLite file, in memory, or in a :class:`Store` shared with peers."""

    def __init__(self, path: str | os.PathLike | Store = ":memory:", *, name: str = "db1"):
        if not (isinstance(name, str) and re.fullmatch(r"[\w.-]{1,64}", name)):
            raise ParameterError(f"name: {name!r} must be 1 to 64 letters, digits, '_', '.' or '-', e.g. 'db1'")
        self.name = name
        self.store = path if isinstance(path, Store) else Store(path)
        with self.store.transaction() as connection:
            connection.execute(
                "INSERT OR IGNORE INTO databases VALUES ((SELECT COALESCE(MAX(position), 0) + 1 FROM databases), ?)",
                (name,),
            )

    def add(
        self, document: ProtocolDocument | str, sources: Iterable[str] = (), *, expected_hash: str | None = None
    ) -> str:
        """Store ``document`` (or merge new ``sources`` into it if it is here) and return its hash.

        Refused with a ProtocolError, and nothing stored, if ``expected_hash`` is given and differs from the
        document's hash, or if a ``data:`` source carries another text.
        """
        document = document if isinstance(document, ProtocolDocument) else ProtocolDocument(document)
        sources = checked_sources(sources, "sources", allow_empty=True)
        if expected_hash is not None and checked_hash(expected_hash, "expected_hash") != document.hash:
            raise ProtocolError(
                f"refused: the document's hash is {document.hash}, not the expected {expected_hash}; "
                f"nothing was stored in {self.name} (fetch the document the hash names)"
            )
        for source in filter(is_data_uri, sources):
            carried = protocol_hash(from_data_uri(source))
            if carried != document.hash:
                raise ProtocolError(
                    f"refused: a data: source carries the document {carried}, not {document.hash}; nothing was "
                    f"stored in {self.name} (make the source with to_data_uri(document.text))"
                )
        row = (document.hash, document.text, document.name, document.description)
        with self.store.transaction() as connection:
            self._insert(connection, row, sources, self._held_keys(connection, document.hash))
        return document.hash

    def _held_keys(self, connection: sqlite3.Connection, hash: str | None = None) -> set:
        """The hashes this database holds and its (hash, source) pairs, all of them or ``hash``'s."""
        where, parameters = ("", (self.name,)) if hash is None else (" AND hash = ?", (self.name, hash))
        hashes = connection.execute(f"SELECT hash FROM documents WHERE database = ?{where}", parameters).fetchall()
        pairs = connection.execute(f"SELECT hash, uri FROM sources WHERE database = ?{where}", parameters).fetchall()
        return {hash for (hash,) in hashes} | set(pairs)

    def _insert(self, connection: sqlite3.Connection, row: tuple, sources: Iterable[str], held: set) -> None:
        """Store the document ``row`` (hash, text, name, description) after the others, unless ``held`` (this
        database's :meth:`_held_keys`, kept up to date) has it, and each of ``sources`` it has not, after the
        document's others."""
        hash = row[0]
        if hash not in held:
            connection.execute(
                "INSERT INTO documents VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM documents "
                "WHERE database = ?), ?, ?, ?, ?)",
                (self.name, self.name, *row),
            )
            held.add(hash)
        for uri in sources:
            if (hash, uri) not in held:
                connection.execute(
                    "INSERT INTO sources VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM sources "
                    "WHERE database = ? AND hash = ?), ?)",
                    (self.name, hash, self.name, hash, uri),
                )
                held.add((hash, uri))

    def get(self, hash: str) -> ProtocolDocument | None:
        """The document with this hash, or None; a ProtocolError if the file was altered under the hash."""
        rows = self.store.rows("SELECT text FROM documents WHERE database = ? AND hash = ?", self.name, hash)
        if not rows:
            return None
        document = ProtocolDocument(rows[0][0])
        if document.hash != hash:
            raise ProtocolError(
                f"{self.name}: the text stored under {hash} hashes to {document.hash}; the file was altered"
            )
        return document

    def listing(self) -> list[Entry]:
        """Every document, in the order it arrived: the demo's ``GET /`` (hash, name, description), with sources."""
        sources: dict[str, list[str]] = {}
        for hash, uri in self.store.rows(
            "SELECT hash, uri FROM sources WHERE database = ? ORDER BY hash, position", self.name
        ):
            sources.setdefault(hash, []).append(uri)
        return [
            Entry(hash, name, description, tuple(sources.get(hash, ())))
            for hash, name, description in self.store.rows(
                "SELECT hash, name, description FROM documents WHERE database = ? ORDER BY position", self.name
            )
        ]

    def search(self, task: str | Iterable[str], *, limit: int | None = None) -> list[Entry]:
        """The documents whose name or description contain keywords of ``task``, best first.

        ``task`` is a task type (``"weather_forecast"``, ``"bookTaxi"``), a description, or a list of keywords.
        Keywords are its words, split at anything but letters and digits and at camelCase, lower-cased, without
        English stop words ("for", "the", ...). A document scores the number of distinct keywords among the
        words of its name and description; documents that score 0 (those without metadata among them) are left
        out, and ties keep the order of arrival. This stands in for the demo's LLM, which read the listing and
        kept the protocols that seemed suitable (D.1).
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ParameterError(f"limit: {limit!r} must be a positive whole number, or None for every match")
        wanted = keywords(task)
        scored = []
        for entry in self.listing():
            score = len(wanted & keywords(f"{entry.name or ''} {entry.description or ''}"))
            if score:
                scored.append((-score, len(scored), entry))
        return [entry for _, _, entry in sorted(scored)][:limit]

    def hashes(self) -> tuple[str, ...]:
        return tuple(entry.hash for entry in self.listing())

    def __contains__(self, hash: object) -> bool:
        return bool(self.store.rows("SELECT 1 FROM documents WHERE database = ? AND hash = ?", self.name, hash))

    def __len__(self) -> int:
        return self.store.rows("SELECT COUNT(*) FROM documents WHERE database = ?", self.name)[0][0]

    def __repr__(self) -> str:
        return f"ProtocolDatabase({self.name!r}, {len(self)} documents)"


def keywords(task: str | Iterable[str]) -> frozenset[str]:
    """The search keywords of a task type, a description or a list of words (see ProtocolDatabase.search)."""
    words = [task] if isinstance(task, str) else list(task)
    if not all(isinstance(word, str) for word in words):
        raise ParameterError(f"task: {task!r} must be text or a list of words, e.g. 'weather_forecast'")
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", " ".join(words))
    return frozenset(w for w in re.findall(r"[^\W_]+", split.lower()) if w not in STOP_WORDS)


class DatabaseNetwork:
    """``size`` protocol databases ``db1``, ``db2``, … peered in a chain, syncing every ``sync_interval`` queries."""

    def __init__(
        self, path: str | os.PathLike = ":memory:", *, size: int = DATABASES, sync_interval: int = SYNC_INTERVAL
    ):
        _check_count("size", size, MAX_DATABASES, "databases in the chain (D.1: 3)")
        _check_count("sync_interval", sync_interval, MAX_SYNC_INTERVAL, "queries between syncs (D.1: 10)")
        store = Store(path)
        if store.rows("SELECT 1 FROM databases"):
            store.close()
            raise ParameterError(
                f"path: {path} already holds protocol databases; reopen them with DatabaseNetwork.open(path)"
            )
        with store.transaction() as connection:
            connection.executemany(
                "INSERT INTO counters VALUES (?, ?)", [("sync_interval", sync_interval), ("queries", 0), ("syncs", 0)]
            )
        self._attach(store, [f"db{i}" for i in range(1, size + 1)])

    @classmethod
    def open(cls, path: str | os.PathLike) -> "DatabaseNetwork":
        """The network saved at ``path`` (by :meth:`save`, or built there), with its documents and counters."""
        if not Path(path).is_file():
            raise ParameterError(
                f"path: {path} is not a file; save a network there first with DatabaseNetwork.save(path)"
            )
        store = Store(path)
        counters = dict(store.rows("SELECT name, value FROM counters"))
        if set(counters) != {"sync_interval", "queries", "syncs"}:
            store.close()
            raise ParameterError(f"path: {path} holds no network of protocol databases (its counters are {counters})")
        network = cls.__new__(cls)
        network._attach(store, [name for (name,) in store.rows("SELECT name FROM databases ORDER BY position")])
        return network

    def _attach(self, store: Store, names: list[str]) -> None:
        self.store = store
        self.databases = tuple(ProtocolDatabase(store, name=name) for name in names)

    def _counter(self, name: str) -> int:
        return self.store.rows("SELECT value FROM counters WHERE name = ?", name)[0][0]

    @property
    def sync_interval(self) -> int:
        return self._counter("sync_interval")

    @property
    def queries(self) -> int:
        """Queries counted by :meth:`query_executed` since the network was built."""
        return self._counter("queries")

    @property
    def syncs(self) -> int:
        return self._counter("syncs")

    def __getitem__(self, name: str) -> ProtocolDatabase:
        for database in self.databases:
            if database.name == name:
                return database
        raise KeyError(f"no database {name!r}; the network has {', '.join(d.name for d in self.databases)}")

    def peers(self, database: ProtocolDatabase) -> tuple[ProtocolDatabase, ...]:
        """The database's neighbours in the chain (D.1: 1 and 3 are peers of 2, not of each other)."""
        i = self.databases.index(database)
        return self.databases[max(i - 1, 0) : i] + self.databases[i + 1 : i + 2]

    def query_executed(self) -> bool:
        """Count one query of the network; every ``sync_interval``-th one triggers a :meth:`sync`. True if it did."""
        with self.store.lock:  # one count and its sync at a time, whichever thread calls
            with self.store.transaction() as connection:
                connection.execute("UPDATE counters SET value = value + 1 WHERE name = 'queries'")
            if self.queries % self.sync_interval:
                return False
            self.sync()
            return True

    def sync(self) -> None:
        """Every database gives each peer the documents and sources it held when the sync began (one hop)."""
        with self.store.transaction() as connection:
            held = {database.name: _held(database) for database in self.databases}
            keys = {database.name: database._held_keys(connection) for database in self.databases}
            for database in self.databases:
                for peer in self.peers(database):
                    for row, sources in held[database.name]:
                        peer._insert(connection, row, sources, keys[peer.name])
            connection.execute("UPDATE counters SET value = value + 1 WHERE name = 'syncs'")

    def save(self, path: str | os.PathLike) -> None:
        """Copy the whole network into the SQLite file ``path`` (replacing what it held); reopen it with open()."""
        if self.store.path != ":memory:" and Path(path).resolve() == Path(self.store.path).resolve():
            return  # a network built in a file is written as it changes
        target = sqlite3.connect(str(path))
        try:
            with self.store.lock:
                self.store.connection.backup(target)
        finally:
            target.close()

    def close(self) -> None:
        self.store.close()

    def __repr__(self) -> str:
        chain = "–".join(f"{d.name} ({len(d)})" for d in self.databases)
        return f"DatabaseNetwork({chain}, {self.queries} queries, {self.syncs} syncs)"


def _held(database: ProtocolDatabase) -> list[tuple[tuple, tuple[str, ...]]]:
    """The database's documents in the order they arrived, as stored (hash, text, name, description), with their
    sources; a ProtocolError if a text no longer hashes to its hash (the file was altered), as :meth:`get` says."""
    texts = dict(database.store.rows("SELECT hash, text FROM documents WHERE database = ?", database.name))
    for hash, text in texts.items():
        if protocol_hash(text) != hash:
            database.get(hash)  # raises the ProtocolError that names the altered text
    return [((e.hash, texts[e.hash], e.name, e.description), e.sources) for e in database.listing()]


def _check_count(name: str, value: object, high: int, meaning: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ParameterError(f"{name}: {value!r} must be a whole number from 1 to {high}: the number of {meaning}")
