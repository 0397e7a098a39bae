"""The rule-based programmer's routines, run in the kit's process whenever that gives the sandbox's answer.

A routine the :class:`~coordkit.agora.routines.SchemaProgrammer` writes is kit code: a fixed template whose only
variable parts are a task's schemas, read from JSON in a string literal, and a tool's name, an identifier
(:class:`~coordkit.agora.routines.TemplateRoutine`). Nothing in it is a stranger's code, so nothing calls for the
sandbox but the line budget, which decides whether a call computes too long (:mod:`~coordkit.agora.sandbox`). A
sandboxed call costs a message between processes, about half a millisecond: 40% of an Agora run, thousands of
them. :class:`TemplateSession` runs the same template here instead, compiled once, with the validator the template
copies (:func:`~coordkit.agora.schemas.validate`) and its schemas read from the same JSON, so that it runs the same
code on the same values, and fails with the same reason and message (:func:`~coordkit.agora.sandbox_worker.call_loaded`,
:func:`~coordkit.agora.sandbox.answer`). It does so only when the budget cannot decide (:func:`lines_bound`) and
the body nests shallowly enough that no recursion limit can either (``MAX_BRACKETS``); any other call goes to a
sandbox session, the same as an LLM's routine. LLM-written routines always run in the sandbox. A call run here
has no wall clock: the sandbox's is a safety net for a machine too slow, which a call within its budget never
reaches on a working one.
"""

import json
from functools import cache, lru_cache

from coordkit.agora.routines import TemplateRoutine
from coordkit.agora.sandbox import RoutineSession, answer, check_text, routine_session
from coordkit.agora.sandbox_worker import call_loaded
from coordkit.agora.schemas import validate

# A body with at most this many brackets nests at most as deep: the validator recurses once a level, the JSON
# decoder too, far within the recursion limit in the sandbox's process and in the kit's
MAX_BRACKETS = 100
# Lines a call may run besides the validator's: the template's handle, the JSON module's Python, call_loaded's
BASE_LINES = 200
# Lines one validate() call runs besides those per schema entry: 27 a value, entries included, on the tests'
# trip schema (41 stops of 3 values: 3,444 lines, against a bound of 156,000)
LINES_PER_VALUE = 50
LINES_PER_ENTRY = 5  # lines one enum value, required name or property of a schema runs in one validate() call


def lines_bound(routine: TemplateRoutine, body: str) -> int:
    """At most the lines of Python ``routine`` runs on ``body`` (its sandbox's budget counts them): validate() is
    called at most once per JSON value of the body (a value takes a character at least), and one call runs
    ``LINES_PER_VALUE`` lines and ``LINES_PER_ENTRY`` per enum value, required name and property of its schema, of
    which the routine's schemas have ``schema_entries``."""
    return BASE_LINES + len(body) * (LINES_PER_VALUE + LINES_PER_ENTRY * schema_entries(routine))


@lru_cache(maxsize=1024)
def schema_entries(routine: TemplateRoutine) -> int:
    """The enum values, required names and properties in the routine's two schemas, every level."""
    return sum(_entries(json.loads(text)) for text in (routine.input_json, routine.output_json))


def _entries(schema: dict) -> int:
    nested = [*schema.get("properties", {}).values(), *([schema["items"]] if "items" in schema else [])]
    own = sum(len(schema.get(key, ())) for key in ("enum", "required", "properties"))
    return own + sum(_entries(part) for part in nested)


@lru_cache(maxsize=1024)
def compiled_handle(routine: TemplateRoutine):
    """The template's ``handle``, compiled once, its globals what the routine's module defines: ``json``, its
    schemas read from the same JSON, the server's ``TOOL`` and the validator."""
    namespace = {
        "json": json,
        "validate": validate,
        "INPUT": json.loads(routine.input_json),
        "OUTPUT": json.loads(routine.output_json),
        **({} if routine.tool is None else {"TOOL": routine.tool}),
    }
    exec(_template_code(routine.handle), namespace)  # the kit's own template (routines.USER_HANDLE/SERVER_HANDLE)
    return namespace["handle"]


@cache
def _template_code(handle: str):
    return compile(handle, "<routine>", "exec")


class TemplateSession:
    """``session(body) -> str`` for a :class:`~coordkit.agora.routines.TemplateRoutine`, as a sandbox session of it
    answers: here when the budget and the recursion limits cannot decide the call, else in a sandbox session
    (opened on first need, under ``max_lines`` and ``timeout_s``). ``in_process`` and ``sandboxed`` count the calls
    each way. Close it when done."""

    def __init__(self, routine: TemplateRoutine, max_lines: int, timeout_s: float):
        self.routine, self.max_lines, self.timeout_s = routine, max_lines, timeout_s
        self.in_process = self.sandboxed = 0
        self._session: RoutineSession | None = None

    def __call__(self, body: str) -> str:
        check_text(self.routine, body)
        if body.count("[") + body.count("{") <= MAX_BRACKETS and lines_bound(self.routine, body) <= self.max_lines:
            self.in_process += 1
            return answer(call_loaded(compiled_handle(self.routine), body, Exception))
        self.sandboxed += 1
        if self._session is None:
            self._session = routine_session(self.routine, max_lines=self.max_lines, timeout_s=self.timeout_s)
        return self._session(body)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
