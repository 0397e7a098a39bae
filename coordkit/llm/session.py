"""The optional LLM cell of a notebook (and a script's LLM run) in one call: live, replayed, or skipped.

``open_llm("rep-beer-fig1")`` chooses, in this order: **live** Claude when ``ANTHROPIC_API_KEY`` is set;
**replay** of ``data/recordings/rep-beer-fig1.jsonl`` when it exists; otherwise **off**, with one friendly
sentence. ``COORDKIT_LLM=live|replay|off`` (or ``mode=``) forces a choice. Every call goes through a ledger,
and live calls through the budget.
"""

import os
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from coordkit.llm.anthropic_client import DEFAULT_MODEL, KEY_VARIABLE, MODEL_VARIABLE, AnthropicClient, has_key
from coordkit.llm.base import LLMClient, StopRun
from coordkit.llm.ledger import Ledger, MeteredClient, check_budget, dollars
from coordkit.llm.prices import PriceTable
from coordkit.llm.recording import RecordingClient, ReplayClient, recording_age
from coordkit.paths import DATA

MODES = ("live", "replay", "off")
MODE_VARIABLE = "COORDKIT_LLM"
RECORDINGS = DATA / "recordings"


@dataclass
class LLMSession:
    """What :func:`open_llm` chose: ``client`` (None when off), the ``ledger`` of its calls, and a ``notice``."""

    mode: str
    client: LLMClient | None
    ledger: Ledger
    notice: str

    def __bool__(self) -> bool:
        return self.client is not None

    def run(self, experiment, *args, **kwargs):
        """``experiment(*args, llm=client, **kwargs)``; a stop (the budget reached, a recording that does not
        belong to the run, a provider that fails every call) prints why and returns None."""
        try:
            return experiment(*args, llm=self.client, **kwargs)
        except StopRun as stop:
            print(f"{stop.headline}, run stopped: {stop}")
            return None

    def summary(self) -> pd.DataFrame:
        """Calls, tokens and dollars per model so far (see :class:`~coordkit.llm.Ledger`)."""
        return self.ledger.summary()


def cost_bound(recording: str | Path, model: str | None = None, prices: PriceTable | None = None) -> float:
    """The most a live run of a recording's prompts could cost on ``model`` (default: the live default), in
    dollars: the budget's worst case per call (every prompt byte a token, every reply ``max_tokens`` long)."""
    model = model or os.environ.get(MODEL_VARIABLE) or DEFAULT_MODEL
    meter = MeteredClient(ReplayClient(recording_path(recording)), Ledger(prices))
    return sum(meter.worst_case_usd(replace(request, model=model)) for request in meter.inner.requests())


def recording_path(name: str | Path) -> Path:
    """A recording by name (``data/recordings/<name>.jsonl``) or by path."""
    path = Path(name)
    return path if path.suffix == ".jsonl" else RECORDINGS / f"{name}.jsonl"


def open_llm(
    recording: str | Path,
    *,
    budget_usd: float = 1.0,
    model: str | None = None,
    record_to: str | Path | None = None,
    mode: str | None = None,
) -> LLMSession:
    """Pick the LLM source for a run named ``recording`` (see the module docstring).

    Args:
        budget_usd: the most a live run may spend (the ledger stops it before the call that could exceed it).
        model: the live model (default: ``$COORDKIT_MODEL`` or a current Claude Haiku).
        record_to: a live run is also recorded to this JSONL file, for replaying later.
        mode: "live", "replay" or "off"; default ``$COORDKIT_LLM``, else automatic.
    """
    check_budget(budget_usd)
    mode = mode or os.environ.get(MODE_VARIABLE) or None
    if mode is not None and mode not in MODES:
        raise ValueError(f"LLM mode {mode!r} is not one of {', '.join(MODES)} (check ${MODE_VARIABLE})")
    path = recording_path(recording)
    run = "" if path == Path(recording) else str(recording)  # a recording named by its run, not a file
    ledger = Ledger()
    if mode == "live" or (mode is None and has_key()):
        if not has_key():
            return LLMSession(
                "off", None, ledger, f"Live mode needs {KEY_VARIABLE}; it is not set, so the LLM run is skipped."
            )
        client: LLMClient = AnthropicClient(model)
        if record_to is not None:
            client = RecordingClient(client, record_to, run=run, command=f"open_llm({str(recording)!r})")
        notice = (
            f"Live: {client.default_model} through the Anthropic API, budget {dollars(budget_usd)}. "
            "Replies vary from run to run."
        )
        return LLMSession("live", MeteredClient(client, ledger, budget_usd), ledger, notice)
    if mode in (None, "replay") and path.exists():
        notice = f"Replaying {path.name} ({recording_age(path)}): offline, free, the same every time."
        return LLMSession("replay", MeteredClient(ReplayClient(path, run=run), ledger), ledger, notice)
    if mode == "off":
        reason = "LLM runs are switched off"
    elif mode == "replay":
        reason = f"Replay mode, and there is no recording {path.name}"
    else:
        reason = f"No {KEY_VARIABLE} and no recording {path.name}"
    return LLMSession("off", None, ledger, f"{reason}: the LLM run is skipped (everything above stands without it).")
