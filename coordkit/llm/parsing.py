"""Helpers that read the labelled and JSON replies the papers' prompts ask for. They never raise anything but
:class:`ReplyParseError`."""

import json
import re


class ReplyParseError(ValueError):
    """An LLM reply that does not have the form the prompt asked for: the decision falls back to the rules."""


_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"


def labelled_number(text: str, label: str) -> float:
    """The number after ``LABEL:`` (e.g. ``DECISION: 12``), tolerant of markdown and surrounding words."""
    match = re.search(rf"{re.escape(label)}\**\s*[:=]\s*\**\s*\[?\s*\$?({_NUMBER})", text, flags=re.IGNORECASE)
    if not match:
        raise ReplyParseError(f"no number after {label}: in the reply")
    return float(match.group(1).replace(",", "."))


def labelled_text(text: str, label: str) -> str:
    """The text after ``LABEL:`` up to the next ``OTHER_LABEL:`` line or the end."""
    match = re.search(
        rf"{re.escape(label)}\**\s*:\s*(.*?)(?=\n\s*\**[A-Z][A-Z_ ]{{2,}}\**\s*:|\Z)",
        text,
        flags=re.IGNORECASE | re.DOTALL,
    )
    if not match or not match.group(1).strip():
        raise ReplyParseError(f"no text after {label}: in the reply")
    return match.group(1).strip()


def json_object(text: str) -> dict:
    """The first JSON object in the reply, also inside a markdown code block."""
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyParseError("no JSON object in the reply")
