"""The Agora meta protocol (Marro et al.): protocol documents, negotiated protocols and sandboxed routines (§4).

The family is being built (issue 12): so far the protocol layer (:mod:`~coordkit.agora.protocol`), the protocol
databases (:mod:`~coordkit.agora.databases`), the routine sandbox (:mod:`~coordkit.agora.sandbox`), the
transports, in process and over HTTP (:mod:`~coordkit.agora.transport`), the demo's servers and tasks
(:mod:`~coordkit.agora.tasks`), the queries of a run (:mod:`~coordkit.agora.screenplay`), and routines with the
rule-based programmer (:mod:`~coordkit.agora.routines`).
"""

from coordkit.agora.protocol import protocol_hash

__all__ = ["protocol_hash"]
