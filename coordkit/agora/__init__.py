"""The Agora meta protocol (Marro et al.): protocol documents, negotiated protocols and sandboxed routines.

Agents talk in natural language through their LLMs, and, where a kind of query recurs, negotiate a protocol
document and write routines that handle it without an LLM (§4). :class:`WeatherDemo` is the paper's two-agent demo
(§5.2, Appendix C); :class:`AgoraNetwork` its 100-agent network of users and servers (§5.3, Appendix D), with its
natural-language counterfactual. The layers underneath: protocol documents and transactions
(:mod:`~coordkit.agora.protocol`), protocol databases (:mod:`~coordkit.agora.databases`), the routine sandbox
(:mod:`~coordkit.agora.sandbox`), transports in process and over HTTP (:mod:`~coordkit.agora.transport`), the
demo's servers and tasks (:mod:`~coordkit.agora.tasks`) and routines (:mod:`~coordkit.agora.routines`).
"""

from coordkit.agora.model import PROTOCOLS, AgoraNetwork, WeatherDemo
from coordkit.agora.protocol import protocol_hash

__all__ = ["PROTOCOLS", "AgoraNetwork", "WeatherDemo", "protocol_hash"]
