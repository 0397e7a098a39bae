"""LLM clients behind one small interface (design: "Policies and LLMs").

Domain code only sees :class:`LLMClient`; the Anthropic client, recordings, ledgers and budgets plug in
behind it without touching any model.
"""

from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest
from coordkit.llm.scripted import ScriptedClient

__all__ = ["LLMClient", "LLMError", "LLMReply", "LLMRequest", "ScriptedClient"]
