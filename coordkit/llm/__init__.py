"""LLM clients behind one small interface (design: "Policies and LLMs").

Domain code only sees :class:`LLMClient`. Behind it: Claude through the Anthropic SDK, OpenAI-compatible local
servers, a recorder and a replayer, a ledger with a budget, and a scripted client for tests — stacked by
:func:`open_llm` for notebooks and scripts.

Each name below loads its module when first used (PEP 562): a model whose agents follow rules needs only the
interface, not the recorder, the ledger or the price table.
"""

import importlib

_MODULES = {
    "BudgetExceeded": "coordkit.llm.base",
    "LLMClient": "coordkit.llm.base",
    "LLMError": "coordkit.llm.base",
    "LLMReply": "coordkit.llm.base",
    "LLMRequest": "coordkit.llm.base",
    "Ledger": "coordkit.llm.ledger",
    "MeteredClient": "coordkit.llm.ledger",
    "PriceTable": "coordkit.llm.prices",
    "RecordingClient": "coordkit.llm.recording",
    "ReplayClient": "coordkit.llm.recording",
    "ReplayMiss": "coordkit.llm.recording",
    "ScriptedClient": "coordkit.llm.scripted",
}
__all__ = list(_MODULES)


def __getattr__(name: str):
    if name not in _MODULES:
        raise AttributeError(f"module 'coordkit.llm' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_MODULES[name]), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
