"""Ahoy (Joshi, Singh and Chopra): agents that enact BSPL protocols from a user's goal — with a rule brain offline,
or an LLM through the LLM access function of §3.3 — and the paper's four scenarios (§5)."""

from coordkit.ahoy.model import AhoyEnactment

__all__ = ["AhoyEnactment"]
