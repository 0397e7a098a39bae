"""Record an LLM run once, replay it offline forever (design: "Policies and LLMs").

A recording is a JSONL file: a header line (model, date, command, note), then one line per call with its
request, its fingerprint, and the reply (text, model, token usage, latency) or the error it raised. The
fingerprint is a SHA-256 of model + system + messages + temperature + max_tokens: the same prompt with the
same sampling parameters finds its reply again. A prompt asked several times is answered in recorded order
(and with its last recorded reply once those run out).
"""

import difflib
import hashlib
import json
import os
import threading
from collections import defaultdict, deque
from datetime import UTC, datetime
from pathlib import Path

from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest

FORMAT = 1
SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


class ReplayMiss(LLMError):
    """The recording has no reply for this request; the message names the closest recorded prompt."""


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


def scrub(text: str) -> str:
    """``text`` with the value of every API-key variable replaced, so no key can reach a file or a log."""
    for name in SECRET_VARIABLES:
        secret = os.environ.get(name, "")
        if len(secret) >= 8:
            text = text.replace(secret, f"[{name} redacted]")
    return text


class RecordingClient(LLMClient):
    """Wraps ``inner`` and appends every call it answers — or fails — to the JSONL file at ``path``.

    The file is started afresh with a header naming the model, the time, and what was run (``command``, ``note``).
    """

    def __init__(self, inner: LLMClient, path: Path | str, *, command: str = "", note: str = ""):
        self.inner = inner
        self.path = Path(path)
        self.default_model = inner.default_model
        self.billable = inner.billable
        self._lock = threading.Lock()
        header = {
            "kind": "header",
            "format": FORMAT,
            "model": inner.default_model,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command,
            "note": note,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(scrub(json.dumps(header, ensure_ascii=False)) + "\n")

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
            line["error"] = {"type": type(error).__name__, "message": str(error)}
        with self._lock, self.path.open("a") as file:
            file.write(scrub(json.dumps(line, ensure_ascii=False)) + "\n")


class ReplayClient(LLMClient):
    """Serves a recording offline: each request gets the reply recorded for its fingerprint.

    Replies cost nothing and take no time (the recorded latency stays in ``metadata``). A recorded failure is
    raised again as :class:`LLMError`, so the replayed run falls back exactly where the recorded one did.
    A request the recording does not hold raises :class:`ReplayMiss`, naming the closest recorded prompt.
    """

    billable = False

    def __init__(self, path: Path | str):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"no recording at {self.path}; make one with `coordkit record ID`")
        lines = [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
        if not lines or lines[0].get("kind") != "header" or lines[0].get("format") != FORMAT:
            raise ValueError(f"{self.path} is not a coordkit recording (format {FORMAT}); record it again")
        self.header = lines[0]
        self.default_model = self.header["model"]
        self.calls = lines[1:]
        self._queues: dict[str, deque] = defaultdict(deque)
        for call in self.calls:
            self._queues[call["fingerprint"]].append(call)
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
        if call is None:
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

    def _explain_miss(self, request: LLMRequest, model: str) -> str:
        wanted = request_record(request, model)
        if not self.calls:
            return f"{self.path.name} holds no calls; record the run again"
        text = _as_text(wanted)
        closest = max(
            self.calls, key=lambda call: difflib.SequenceMatcher(None, text, _as_text(call["request"])).ratio()
        )
        recorded = closest["request"]
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


def _as_text(record: dict) -> str:
    return "\n".join([f"[system] {record['system']}", *(f"[{role}] {text}" for role, text in record["messages"])])


def recording_age(path: Path | str) -> str:
    """When and with which model a recording was made, for a notebook's one-line notice."""
    header = json.loads(Path(path).read_text().splitlines()[0])
    return f"{header['model']}, recorded {header['created'][:10]}"
