"""The reference implementation's protocols (``shcv/bspl``, copied into ``data/protocols/reference/corpus/``) and
what the reference (the ``bspl`` package) said of each, recorded once by ``tools/record_bspl_reference.py``: the
kit checks them and compares, aspect by aspect.

An aspect is ``parses``, a protocol's ``roles``, ``parameters`` (name, adornment, key), ``private``, ``keys``,
``messages`` (sender, recipients, parameters), its ``safe`` and ``live`` verdicts and its ``unused`` parameters.
Liveness is compared with ``bspl verify all``'s (the mode behind the repository's ``by-property`` labels), which
takes a protocol's ``in`` parameters as given from outside, as the kit does; ``bspl verify liveness`` does not.
A difference the kit keeps on purpose is written in ``data/protocols/reference/disagreements.csv`` with the
reason and a citation; :func:`compare` marks it explained.
"""

import csv
import json
from dataclasses import dataclass
from functools import cache

import pandas as pd

from coordkit.bspl.parser import ParseError, parse_all
from coordkit.bspl.protocol import Parameter, Protocol
from coordkit.bspl.verifier import verify
from coordkit.paths import DATA

REFERENCE = DATA / "protocols" / "reference"
CORPUS = REFERENCE / "corpus"
ASPECTS = ("parses", "roles", "parameters", "private", "keys", "messages", "safe", "live", "unused")


@dataclass(frozen=True)
class Difference:
    """One aspect of one file (and protocol) on which the kit and the reference differ; ``reason`` is the
    explanation written in the disagreements file, or empty."""

    file: str
    protocol: str
    aspect: str
    kit: str
    reference: str
    reason: str = ""


@cache
def records() -> dict:
    """The reference's records: ``{"source": ..., "files": {path: record}}``."""
    return json.loads((REFERENCE / "reference-verdicts.json").read_text(encoding="utf-8"))


def files() -> list[str]:
    """The corpus's files, as paths under ``corpus/`` (the repository's own paths)."""
    return sorted(records()["files"])


def text(file: str) -> str:
    return (CORPUS / file).read_text(encoding="utf-8")


@cache
def explained() -> dict[tuple[str, str, str], dict]:
    """The disagreements the kit keeps, by (file, protocol, aspect)."""
    with open(REFERENCE / "disagreements.csv", encoding="utf-8", newline="") as rows:
        return {(row["file"], row["protocol"], row["aspect"]): row for row in csv.DictReader(rows)}


def kit_view(file: str, verdicts: bool = True) -> dict:
    """What the kit says of ``file``, in the form of the reference's records."""
    try:
        protocols = parse_all(text(file))
    except ParseError as error:
        return {"parses": False, "error": str(error)}
    return {"parses": True, "protocols": {p.name: _protocol_view(p, verdicts) for p in protocols}}


def _parameter(parameter: Parameter, key: bool | None = None) -> dict:
    """A parameter as the reference records it; ``key``: whether it is a key where it stands (a message's key
    parameter is one the protocol declares or the message marks, :meth:`Protocol.keys_of`)."""
    return {"name": parameter.name, "adornment": parameter.adornment, "key": parameter.key if key is None else key}


def _protocol_view(protocol: Protocol, verdicts: bool) -> dict:
    view = {
        "roles": list(protocol.roles),
        "parameters": [_parameter(p) for p in protocol.parameters],
        "private": sorted(protocol.private),
        "keys": sorted(protocol.keys),
        "messages": {
            m.name: {
                "sender": m.sender,
                "recipients": list(m.recipients),
                "parameters": [_parameter(p, p.name in protocol.keys_of(m)) for p in m.parameters],
            }
            for m in protocol.messages
        },
    }
    if verdicts:
        report = verify(protocol)
        view.update(safe=report.safe, live=report.live, unused=sorted(report.unused))
    return view


def _reference_view(record: dict) -> dict:
    """A protocol's record reduced to the aspects the kit compares (verdicts as True/False, or a text when the
    reference timed out or failed)."""

    def verdict(answer, key):
        return answer.get(key) if isinstance(answer, dict) else answer

    return {
        "roles": record["roles"],
        "parameters": record["parameters"],
        "private": sorted(p["name"] for p in record["private"]),
        "keys": record["keys"],
        "messages": record["messages"],
        "safe": verdict(record["safety"], "safe"),
        "live": verdict(record["liveness_all"], "live"),
        "unused": record["unused"],
    }


def compare(file: str, verdicts: bool = True) -> list[Difference]:
    """Every aspect of ``file`` on which the kit and the reference differ, explained or not."""
    reference, kit = records()["files"][file], kit_view(file, verdicts)
    found = []
    if reference["parses"] != kit["parses"]:
        found.append(Difference(file, "", "parses", str(kit["parses"]), str(reference["parses"])))
    elif kit["parses"]:
        theirs = {name: _reference_view(record) for name, record in reference["protocols"].items()}
        for name in sorted(set(theirs) | set(kit["protocols"])):
            if name not in theirs or name not in kit["protocols"]:
                found.append(Difference(file, name, "protocols", str(name in kit["protocols"]), str(name in theirs)))
                continue
            ours = kit["protocols"][name]
            for aspect in ASPECTS[1:] if verdicts else ASPECTS[1:6]:
                if ours[aspect] != theirs[name][aspect]:
                    found.append(Difference(file, name, aspect, _short(ours[aspect]), _short(theirs[name][aspect])))
    notes, limit = explained(), reference.get("limit_seconds")
    return [Difference(**{**d.__dict__, "reason": _reason(d, notes, limit)}) for d in found]


def _reason(difference: Difference, notes: dict, limit: int | None) -> str:
    """Why the kit and the reference differ: the disagreements file's reason, or, where the reference gave no
    verdict (it ran past the time the file's recording gave it, ``limit`` seconds, or failed), that it did not
    answer."""
    if difference.reference.startswith('"') and difference.aspect in ASPECTS[6:]:
        said = json.loads(difference.reference)
        return f"{UNANSWERED} {f'no answer within {limit} s' if said == 'timeout' and limit else said}"
    return notes.get((difference.file, difference.protocol, difference.aspect), {}).get("reason", "")


UNANSWERED = "the reference gave no verdict:"


def _short(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)[:400]


def side_by_side(file: str) -> pd.DataFrame:
    """What the kit and the reference say of ``file``, one row per protocol and aspect (its messages counted),
    with whether they agree and, where they differ on purpose, why."""
    reference, kit = records()["files"][file], kit_view(file)
    if not (reference["parses"] and kit["parses"]):
        said = {"kit": kit.get("error", "parses"), "reference": reference.get("error", "parses")}
        return pd.DataFrame(
            [{"protocol": "", "aspect": "parses", **said, "agree": kit["parses"] == reference["parses"]}]
        )
    differences = {(d.protocol, d.aspect): d for d in compare(file)}
    rows = []
    for name, record in reference["protocols"].items():
        theirs, ours = _reference_view(record), kit["protocols"].get(name, {})
        for aspect in ("safe", "live", "unused", "keys", "messages"):
            shown = len if aspect == "messages" else lambda value: value
            found = differences.get((name, aspect))
            rows.append(
                {
                    "protocol": name,
                    "aspect": aspect,
                    "kit": shown(ours[aspect]) if aspect in ours else None,
                    "reference": shown(theirs[aspect]),
                    "agree": found is None,
                    "why they differ": found.reason if found else "",
                }
            )
    return pd.DataFrame(rows)
