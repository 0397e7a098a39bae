"""Helpers that read the labelled and JSON replies the papers' prompts ask for.

They raise nothing but :class:`ReplyParseError`, on any text, in bounded time: a reply longer than
:data:`MAX_REPLY_CHARS` is refused before it is read (the prompts ask for at most a few hundred tokens), JSON is
looked for at no more than :data:`MAX_JSON_STARTS` opening braces, and numbers too large for a float or not finite
are refused, so that nesting, gigantic numbers or a wall of ``{`` cannot crash or stall a run.
"""

import json
import math
import re

MAX_REPLY_CHARS = 50_000  # far above a reply of max_tokens 400 (about 2,000 characters)
MAX_JSON_STARTS = 100  # opening braces tried as the start of the reply's JSON object
MAX_DIGITS = 9  # digits in a whole number the reply gives (a row, a column, a symbol)


class ReplyParseError(ValueError):
    """An LLM reply that does not have the form the prompt asked for: the decision falls back to the rules."""


_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"
_OPENING_BRACE = re.compile(r"\{")


def readable(text: str) -> str:
    """``text`` if it is a string a parser may read, else :class:`ReplyParseError`."""
    if not isinstance(text, str):
        raise ReplyParseError(f"the reply is a {type(text).__name__}, not text")
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyParseError(f"the reply has {len(text):,} characters, more than the {MAX_REPLY_CHARS:,} read")
    return text


def labelled_number(text: str, label: str) -> float:
    """The number after ``LABEL:`` (e.g. ``DECISION: 12``), tolerant of markdown and surrounding words."""
    match = re.search(
        rf"{re.escape(label)}\**\s*[:=]\s*\**\s*\[?\s*\$?({_NUMBER})", readable(text), flags=re.IGNORECASE
    )
    if not match:
        raise ReplyParseError(f"no number after {label}: in the reply")
    return finite_number(match.group(1).replace(",", "."), label)


def labelled_text(text: str, label: str) -> str:
    """The text after ``LABEL:`` up to the next ``OTHER_LABEL:`` line or the end."""
    match = re.search(
        rf"{re.escape(label)}\**\s*:\s*(.*?)(?=\n\s*\**[A-Z][A-Z_ ]{{2,}}\**\s*:|\Z)",
        readable(text),
        flags=re.IGNORECASE | re.DOTALL,
    )
    if not match or not match.group(1).strip():
        raise ReplyParseError(f"no text after {label}: in the reply")
    return match.group(1).strip()


def json_object(text: str) -> dict:
    """The first JSON object in the reply, also inside a markdown code block."""
    decoder = json.JSONDecoder()
    text = readable(text)
    for tries, brace in enumerate(_OPENING_BRACE.finditer(text)):
        if tries == MAX_JSON_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, brace.start())
        except (ValueError, RecursionError):  # not JSON here, nested too deep, or an integer too long to read
            continue
        if isinstance(value, dict):
            return value
    raise ReplyParseError("no JSON object in the reply")


def whole_number(digits: str, name: str) -> int:
    """A run of digits from the reply as an int; more than :data:`MAX_DIGITS` of them is unparseable (Python
    refuses to read integers of more than 4,300 digits, and no answer the prompts ask for has more than a few)."""
    if len(digits) > MAX_DIGITS:
        raise ReplyParseError(f"{name} has {len(digits):,} digits")
    return int(digits)


def finite_number(value, name: str) -> float:
    """``value`` (a JSON number, or a string of one) as a finite float; anything else is unparseable."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ReplyParseError(f"{name} is not a number: {str(value)[:40]!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):  # not a number, or an integer beyond a float's range
        raise ReplyParseError(f"{name} is not a usable number: {str(value)[:40]!r}") from None
    if not math.isfinite(number):
        raise ReplyParseError(f"{name} is not finite: {str(value)[:40]!r}")
    return number
