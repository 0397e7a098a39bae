"""Copy the reference implementation's sample protocols into data/protocols/reference/ and record, once, what the
reference (the ``bspl`` package) says of each: whether it parses, each protocol's roles, parameters and messages,
and its verdicts (safety, liveness, unused parameters). tests/test_bspl_reference_corpus.py compares the kit with
these records; the kit never imports ``bspl``.

Run it with a Python that has ``bspl`` 1.1.x (a scratch environment, never the kit's .venv)::

    python3.12 -m venv /tmp/bspl-venv && /tmp/bspl-venv/bin/pip install 'bspl>=1.1,<1.2'
    /tmp/bspl-venv/bin/python tools/record_bspl_reference.py /path/to/a/clone/of/shcv/bspl

The clone's commit is written down with the records; the protocols are copied as they are at that commit (the
repository's MIT licence travels with them). Verdicts are the reference's own commands: ``bspl verify safety``
(``safe``), ``bspl verify liveness`` (``live``), ``bspl verify all``'s liveness (``live_all``, the mode behind the
repository's ``by-property`` labels) and ``bspl verify unused`` (``unused``). A verification that takes more than
``--limit`` seconds is recorded as ``"timeout"``; each file's record says the limit its verifications had
(``limit_seconds``), and the source the longest.

``--cache`` keeps the answers as they come (JSON lines, each with its limit), so that an interrupted recording goes
on where it stopped; with ``--retry-timeouts`` an answer that timed out under a shorter limit is computed again. A
long recording can be split: ``--shard 0/2`` and ``--shard 1/2`` (each with a cache of its own) compute every other
text and write no records; a last run given every cache (``--cache`` again and again: the first is written to)
writes them::

    python tools/record_bspl_reference.py CLONE --limit 300 --retry-timeouts --cache a.jsonl --cache b.jsonl --shard 0/2
    python tools/record_bspl_reference.py CLONE --limit 300 --retry-timeouts --cache b.jsonl --cache a.jsonl --shard 1/2
    python tools/record_bspl_reference.py CLONE --limit 300 --cache a.jsonl --cache b.jsonl
"""

import argparse
import ast
import contextlib
import io
import json
import posixpath
import re
import signal
import subprocess
from importlib.metadata import version
from pathlib import Path

import bspl.parsers.bspl as reference
from bspl.verification import paths

OUT = Path(__file__).resolve().parent.parent / "data" / "protocols" / "reference"


class TimedOut(Exception):
    pass


def _alarm(signum, frame):
    raise TimedOut


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=clone, capture_output=True, text=True, check=True).stdout


def within(limit: int, compute):
    """``compute()``, or "timeout" after ``limit`` seconds, or the error's text; anything it prints is dropped."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return compute()
    except TimedOut:
        return "timeout"
    except Exception as error:  # the reference's own failure, recorded as its answer
        return f"error: {type(error).__name__}: {error}"
    finally:
        signal.alarm(0)


def unused(protocol) -> list[str]:
    """``bspl verify unused``: parameters bound (``out``) on some path and never read (``in``/``nil``) on any."""
    found = set()
    for path in paths.max_paths(protocol):
        for event in path:
            found.update(event.msg.outs)
    for path in paths.max_paths(protocol):
        for event in path:
            found.difference_update(event.msg.ins)
            found.difference_update(event.msg.nils)
    return sorted(found)


def verdicts(protocol, limit: int) -> dict:
    def check(function, generator, external):
        answer = paths.verify(protocol, function, generator, external=external, reduction=True, safe=True)
        return {
            key: sorted(value) if isinstance(value, set) else value
            for key, value in answer.items()
            if key in ("safe", "live", "unsafe", "incomplete")
        }

    return {
        "safety": within(limit, lambda: check(paths.safety, paths.every_path, True)),
        "liveness": within(limit, lambda: check(paths.liveness, paths.max_paths, False)),
        "liveness_all": within(limit, lambda: check(paths.liveness, paths.max_paths, True)),
        "unused": within(limit, lambda: unused(protocol)),
    }


def structure(protocol) -> dict:
    """Roles, parameters (adornment, key) and messages (sender, recipients, parameters) as the reference reads them."""

    def parameter(p):
        return {"name": p.name, "adornment": p.adornment, "key": bool(p.key)}

    return {
        "roles": list(protocol.roles),
        "parameters": [parameter(p) for p in protocol.public_parameters.values()],
        "private": [parameter(p) for p in protocol.private_parameters.values()],
        "keys": sorted(protocol.keys),
        "messages": {
            name: {
                "sender": m.sender.name,
                "recipients": [r.name for r in m.recipients],
                "parameters": [parameter(p) for p in m.parameters.values()],
            }
            for name, m in protocol.messages.items()
        },
        "references": sorted(r.name for r in protocol.references.values() if r.type == "protocol"),
    }


def corpus(clone: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The protocol texts by path: every ``.bspl`` file, and every protocol written inline in the repository's
    tests (a string literal holding ``roles`` and ``parameters``, named ``<test file>-<line>.bspl``); and the
    labels of ``samples/by-property/<label>/``, whose entries are links to those files."""
    texts, labels = {}, {}
    for entry in git(clone, "ls-tree", "-r", "HEAD").splitlines():
        mode, _, _, name = entry.split(maxsplit=3)
        if name.endswith(".bspl") and mode == "120000":
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), git(clone, "show", f"HEAD:{name}")))
            labels.setdefault(target, []).append(name.split("/")[2])
        elif name.endswith(".bspl"):
            texts[name] = git(clone, "show", f"HEAD:{name}")
        elif name.startswith("tests/") and name.endswith(".py"):
            for node in ast.walk(ast.parse(git(clone, "show", f"HEAD:{name}"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if re.search(r"\broles\b", node.value) and re.search(r"\bparameters\b", node.value):
                        texts[f"{name.removesuffix('.py')}-{node.lineno}.bspl"] = node.value
    return texts, {target: sorted(found) for target, found in labels.items()}


def record(texts: dict[str, str], limit: int, caches: list[Path], retry: bool, shard: tuple[int, int] | None) -> dict:
    """Each text's answer, by path, with the limit it was computed under; answers are kept in the first of ``caches``
    (JSON lines by text; a line without a limit was computed under an unknown one) as they come, and read from all.
    With ``retry``, an answer with a timeout under a shorter limit is computed again; with ``shard`` (k, n), only
    every n-th text from the k-th is computed, and the others are left out."""
    by_text: dict[str, dict] = {}
    for cache in caches:
        if cache.exists():
            for line in cache.read_text(encoding="utf-8").splitlines():
                kept = json.loads(line)
                by_text[kept["text"]] = kept["answer"] | {"limit_seconds": kept.get("limit")}
    records = {}
    for index, (name, text) in enumerate(sorted(texts.items())):
        if shard is not None and index % shard[1] != shard[0]:
            continue
        target = OUT / "corpus" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        kept = by_text.get(text)
        stale = kept is not None and retry and "timeout" in json.dumps(kept) and (kept["limit_seconds"] or 0) < limit
        if kept is None or stale:
            by_text[text] = answer(text, limit) | {"limit_seconds": limit}
            print(name, json.dumps(by_text[text])[:200], flush=True)
            if caches:
                with caches[0].open("a", encoding="utf-8") as cache:
                    cache.write(json.dumps({"text": text, "answer": by_text[text], "limit": limit}) + "\n")
        records[name] = dict(by_text[text])
    return records


def answer(text: str, limit: int) -> dict:
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            spec = reference.parse(reference.strip_latex(text))  # what load_file does, without its exit on errors
    except Exception as error:
        return {"parses": False, "error": f"{type(error).__name__}: {str(error)[:300]}"}
    return {
        "parses": True,
        "protocols": {p.name: {**structure(p), **verdicts(p, limit)} for p in spec.protocols.values()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, help="a clone of https://github.com/shcv/bspl")
    parser.add_argument("--limit", type=int, default=60, help="seconds per verification (default 60)")
    parser.add_argument(
        "--cache", type=Path, action="append", default=[], help="a file of answers (JSON lines); the first is written"
    )
    parser.add_argument("--retry-timeouts", action="store_true", help="compute again what timed out under less time")
    parser.add_argument("--shard", help="k/n: compute every n-th text from the k-th, and write no records")
    args = parser.parse_args()
    shard = tuple(int(part) for part in args.shard.split("/")) if args.shard else None
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "LICENSE").write_text(git(args.clone, "show", "HEAD:LICENSE"), encoding="utf-8")
    texts, labels = corpus(args.clone)
    records = record(texts, args.limit, args.cache, args.retry_timeouts, shard)
    if shard is not None:
        return
    dangling = {name: found for name, found in labels.items() if name not in records}  # links to removed files
    for name, found in labels.items():
        if name in records:
            records[name]["labels"] = found
    source = {
        "repository": "https://github.com/shcv/bspl",
        "commit": git(args.clone, "rev-parse", "HEAD").strip(),
        "reference": f"bspl {version('bspl')}",
        "limit_seconds": max(r["limit_seconds"] or 0 for r in records.values()),  # the longest; each file has its own
        "labels_of_missing_files": dangling,
    }
    answer = json.dumps({"source": source, "files": records}, indent=1, sort_keys=True, ensure_ascii=False)
    (OUT / "reference-verdicts.json").write_text(answer + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
