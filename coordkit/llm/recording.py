"""Record an LLM run once, replay it offline forever (design: "Policies and LLMs").

A recording is a JSONL file: a header line (model, date, the run it belongs to, command, note), then one line per
call with its request, its fingerprint, and the reply (text, model, token usage, latency) or the error it raised.
The fingerprint is a SHA-256 of model + system + messages + temperature + max_tokens: the same prompt with the
same sampling parameters finds its reply again. A prompt asked several times is answered in recorded order
(and with its last recorded reply once those run out).

A replay that does not belong to its run stops at once (:class:`ReplayMismatch`): a recording made for another
figure, a request of a kind the recording never saw, or no recorded reply for any of the first
:data:`MISSES_BEFORE_MISMATCH` requests. A single request the recording lacks (:class:`ReplayMiss`) falls back to
the rules like any failed call, and is counted in ``misses``.
"""

import difflib
import fcntl
import hashlib
import json
import threading
from collections import Counter, defaultdict, deque
from datetime import UTC, datetime
from pathlib import Path

from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest, StopRun, scrub

FORMAT = 1
MISSES_BEFORE_MISMATCH = 8  # with no reply found for any of the first 8 requests, the recording is another run's
CLOSEST_CANDIDATES = 20  # recorded prompts compared in full when explaining a miss (the rest by a quick bound)


class ReplayMiss(LLMError):
    """The recording has no reply for this request; the message names the closest recorded prompt."""


class ReplayMismatch(StopRun):
    """The recording does not belong to this run; replaying it would only produce rule fallbacks."""

    headline = "Replay stopped"


def request_record(request: LLMRequest, model: str) -> dict:
    """The parts of a request that decide its reply, as JSON-ready data (``purpose`` is kept as a label)."""
    return {
        "model": model,
        "system": request.system,
        "messages": [list(m) for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "purpose": request.purpose,
    }


def fingerprint(request: LLMRequest, model: str) -> str:
    """A stable hash of what decides the reply: model, system, messages and sampling parameters."""
    record = request_record(request, model)
    del record["purpose"]
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class RecordingClient(LLMClient):
    """Wraps ``inner`` and appends every call it answers — or fails — to the JSONL file at ``path``.

    The file is started afresh with a header naming the model, the time, the ``run`` it belongs to (a figure id;
    a replay for another run is refused), and what was run (``command``, ``note``). Each call is one line, written
    whole and flushed, so the calls made before a budget stop or a crash stay readable. The recorder holds a lock on
    the file while it lives: a second recorder of the same file, in this process or another, is refused at once
    instead of interleaving two runs' calls.
    """

    def __init__(self, inner: LLMClient, path: Path | str, *, run: str = "", command: str = "", note: str = ""):
        self.inner = inner
        self.path = Path(path)
        self.default_model = inner.default_model
        self.billable = inner.billable
        self._lock = threading.Lock()
        header = {
            "kind": "header",
            "format": FORMAT,
            "model": inner.default_model,
            "run": run,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command,
            "note": note,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            raise ValueError(f"{self.path} is being recorded by another run: record to another file") from None
        self._file.truncate(0)
        self._append(header)

    def close(self) -> None:
        """Release the file (it stays whole: every line was written as it came)."""
        with self._lock:
            self._file.close()

    def complete(self, request: LLMRequest) -> LLMReply:
        try:
            reply = self.inner.complete(request)
        except Exception as error:
            self._write(request, error=error)
            raise
        self._write(request, reply=reply)
        return reply

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        try:
            reply = await self.inner.complete_async(request)
        except Exception as error:
            self._write(request, error=error)
            raise
        self._write(request, reply=reply)
        return reply

    def note_fallback(self, reason: str) -> None:
        self.inner.note_fallback(reason)

    def _write(self, request: LLMRequest, reply: LLMReply | None = None, error: Exception | None = None) -> None:
        model = request.model or self.default_model
        line = {"kind": "call", "fingerprint": fingerprint(request, model), "request": request_record(request, model)}
        if reply is not None:
            line["reply"] = {
                "text": reply.text,
                "model": reply.model,
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens,
                "latency_s": round(reply.latency_s, 4),
            }
        else:
            line["error"] = {"type": getattr(error, "cause", type(error).__name__), "message": str(error)}
        self._append(line)

    def _append(self, line: dict) -> None:
        with self._lock:
            self._file.write(scrub(json.dumps(line, ensure_ascii=False)) + "\n")
            self._file.flush()


class ReplayClient(LLMClient):
    """Serves a recording offline: each request gets the reply recorded for its fingerprint.

    Replies cost nothing and take no time (the recorded latency stays in ``metadata``). A recorded failure is
    raised again as :class:`LLMError`, so the replayed run falls back exactly where the recorded one did.
    A request the recording does not hold raises :class:`ReplayMiss`, naming the closest recorded prompt, and is
    counted in ``misses``; a recording that does not belong to the run raises :class:`ReplayMismatch` (see the
    module docstring). ``run`` names the run replaying (a figure id): a recording made for another is refused here.
    """

    billable = False

    def __init__(self, path: Path | str, *, run: str | None = None):
        self.path = Path(path)
        self.header, self.calls = read_recording(self.path)
        recorded_run = self.header.get("run") or ""
        if run and recorded_run and recorded_run != run:
            raise ReplayMismatch(
                f"{self.path} was recorded for {recorded_run}, not {run}: replay it with "
                f"`coordkit reproduce {recorded_run} --replay {self.path}`, or record {run}: `coordkit record {run}`"
            )
        self.default_model = self.header["model"]
        self.misses = 0
        self.hits = 0
        self._queues: dict[str, deque] = defaultdict(deque)
        for call in self.calls:
            self._queues[call["fingerprint"]].append(call)
        self._purposes = Counter(call["request"]["purpose"] for call in self.calls)
        self._last: dict[str, dict] = {}
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMReply:
        model = request.model or self.default_model
        key = fingerprint(request, model)
        with self._lock:
            queue = self._queues.get(key)
            call = queue.popleft() if queue else self._last.get(key)
            if call is not None:
                self._last[key] = call
                self.hits += 1
            else:
                self.misses += 1
                mismatch = self._mismatch(request)
        if call is None:
            if mismatch:
                raise ReplayMismatch(mismatch)
            raise ReplayMiss(self._explain_miss(request, model))
        if "error" in call:
            raise LLMError(f"recorded failure: {call['error']['type']}: {call['error']['message']}")
        reply = call["reply"]
        return LLMReply(
            text=reply["text"],
            model=reply["model"],
            input_tokens=reply["input_tokens"],
            output_tokens=reply["output_tokens"],
            latency_s=0.0,
            metadata={"replayed": True, "recorded_latency_s": reply["latency_s"]},
        )

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        return self.complete(request)

    def requests(self) -> list[LLMRequest]:
        """Every recorded request, in recorded order."""
        return [
            LLMRequest(
                system=r["system"],
                messages=tuple(map(tuple, r["messages"])),
                temperature=r["temperature"],
                max_tokens=r["max_tokens"],
                model=r["model"],
                purpose=r["purpose"],
            )
            for r in (call["request"] for call in self.calls)
        ]

    def _mismatch(self, request: LLMRequest) -> str:
        """Why the recording cannot belong to this run, or "" when a miss is only a miss."""
        if request.purpose not in self._purposes:
            kinds = ", ".join(sorted(map(repr, self._purposes))) or "no calls at all"
            return (
                f"{self.path} does not belong to this run: the run asks a {request.purpose!r} request, and the "
                f"recording holds {kinds}. Replay the recording made for this run, or record it again."
            )
        if self.hits == 0 and self.misses >= MISSES_BEFORE_MISMATCH:
            return (
                f"{self.path} does not belong to this run: none of its first {self.misses} requests is in the "
                f"recording (made {self.header.get('created', '?')} by {self.header.get('command') or '?'}). "
                "The prompts, parameters or seeds differ: record the run again with `coordkit record`."
            )
        return ""

    def _explain_miss(self, request: LLMRequest, model: str) -> str:
        wanted = request_record(request, model)
        text = _as_text(wanted)
        candidates = [call for call in self.calls if call["request"]["purpose"] == request.purpose]
        matchers = [difflib.SequenceMatcher(None, text, _as_text(call["request"])) for call in candidates]
        shortlist = sorted(range(len(candidates)), key=lambda i: -matchers[i].quick_ratio())[:CLOSEST_CANDIDATES]
        recorded = candidates[max(shortlist, key=lambda i: matchers[i].ratio())]["request"]
        changes = [
            f"{name}: recorded {recorded[name]!r}, asked {wanted[name]!r}"
            for name in ("model", "temperature", "max_tokens")
            if recorded[name] != wanted[name]
        ]
        diff = [
            line
            for line in difflib.unified_diff(
                _as_text(recorded).splitlines(), text.splitlines(), "recorded", "asked", n=0, lineterm=""
            )
            if not line.startswith(("---", "+++", "@@"))
        ]
        changes += diff[:8] + (["..."] if len(diff) > 8 else [])
        return (
            f"no recorded reply in {self.path.name} for this {wanted['purpose'] or 'request'}. The closest recorded "
            f"prompt ({recorded['purpose'] or 'no purpose'}) differs in:\n  "
            + "\n  ".join(changes)
            + "\nThe prompt or the run changed since it was recorded: record it again with `coordkit record`."
        )


def read_recording(path: Path) -> tuple[dict, list[dict]]:
    """A recording's header and calls, each line checked: a damaged file is named with its line and the fault."""
    if not path.is_file():
        raise FileNotFoundError(f"no recording at {path}; make one with `coordkit record ID`")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path} is not UTF-8 text (byte {error.start}), so not a coordkit recording: record it again"
        ) from None
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty, not a coordkit recording: record it again")
    header = _line(path, *lines[0])
    if header.get("kind") != "header" or header.get("format") != FORMAT or not isinstance(header.get("model"), str):
        raise ValueError(f"{path}, line {lines[0][0]}: not a coordkit recording header (format {FORMAT}); record again")
    calls = []
    for number, line in lines[1:]:
        call = _line(path, number, line)
        problem = _call_problem(call)
        if problem:
            raise ValueError(f"{path}, line {number}: {problem}; the file is damaged: record it again")
        call["request"].setdefault("purpose", "")  # a label only; recordings made before it existed lack it
        calls.append(call)
    return header, calls


def _line(path: Path, number: int, line: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError as error:
        raise ValueError(f"{path}, line {number}: not JSON ({error}); the file is damaged: record it again") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}, line {number}: a JSON {type(value).__name__}, not a recorded call: record it again")
    return value


_REQUEST_FIELDS = {"model": str, "system": str, "messages": list, "temperature": (int, float), "max_tokens": int}
_REPLY_FIELDS = {"text": str, "model": str, "input_tokens": int, "output_tokens": int, "latency_s": (int, float)}


def _call_problem(call: dict) -> str:
    """What is wrong with one recorded call line, or ""."""
    if call.get("kind") != "call" or not isinstance(call.get("fingerprint"), str):
        return "not a recorded call (it needs kind 'call' and a fingerprint)"
    request = call.get("request")
    if not isinstance(request, dict) or _fields_problem(request, _REQUEST_FIELDS):
        return f"the request {_fields_problem(request, _REQUEST_FIELDS) if isinstance(request, dict) else 'is missing'}"
    if not all(isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m) for m in request["messages"]):
        return "the request's messages are not [role, text] pairs"
    if isinstance(call.get("reply"), dict):
        problem = _fields_problem(call["reply"], _REPLY_FIELDS)
        return f"the reply {problem}" if problem else ""
    error = call.get("error")
    if isinstance(error, dict) and isinstance(error.get("type"), str) and isinstance(error.get("message"), str):
        return ""
    return "neither a reply nor an error is recorded"


def _fields_problem(record: dict, fields: dict) -> str:
    for name, kind in fields.items():
        if name not in record:
            return f"has no {name!r}"
        if isinstance(record[name], bool) or not isinstance(record[name], kind):
            return f"has a {type(record[name]).__name__} for {name!r}"
    return ""


def _as_text(record: dict) -> str:
    return "\n".join([f"[system] {record['system']}", *(f"[{role}] {text}" for role, text in record["messages"])])


def recording_age(path: Path | str) -> str:
    """When and with which model a recording was made, for a notebook's one-line notice."""
    header, _ = read_recording(Path(path))
    return f"{header['model']}, recorded {str(header.get('created', '?'))[:10]}"
