"""LLM clients behind one small interface (design: "Policies and LLMs").

Domain code only sees :class:`LLMClient`. Behind it: Claude through the Anthropic SDK, OpenAI-compatible local
servers, a recorder and a replayer, a ledger with a budget, and a scripted client for tests — stacked by
:func:`open_llm` for notebooks and scripts.
"""

from coordkit.llm.base import BudgetExceeded, LLMClient, LLMError, LLMReply, LLMRequest
from coordkit.llm.ledger import Ledger, MeteredClient
from coordkit.llm.prices import PriceTable
from coordkit.llm.recording import RecordingClient, ReplayClient, ReplayMiss
from coordkit.llm.scripted import ScriptedClient

__all__ = [
    "BudgetExceeded",
    "LLMClient",
    "LLMError",
    "LLMReply",
    "LLMRequest",
    "Ledger",
    "MeteredClient",
    "PriceTable",
    "RecordingClient",
    "ReplayClient",
    "ReplayMiss",
    "ScriptedClient",
]
