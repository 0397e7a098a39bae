"""The Agora meta protocol (Marro et al.): protocol documents, negotiated protocols and sandboxed routines.

Agents talk in natural language through their LLMs, and, where a kind of query recurs, negotiate a protocol
document and write routines that handle it without an LLM (§4). :class:`WeatherDemo` is the paper's two-agent demo
(§5.2, Appendix C); :class:`AgoraNetwork` its 100-agent network of users and servers (§5.3, Appendix D), with its
natural-language counterfactual. The layers underneath: protocol documents and transactions
(:mod:`~coordkit.agora.protocol`), protocol databases (:mod:`~coordkit.agora.databases`), the routine sandbox
(:mod:`~coordkit.agora.sandbox`), transports in process and over HTTP (:mod:`~coordkit.agora.transport`), the
demo's servers and tasks (:mod:`~coordkit.agora.tasks`) and routines (:mod:`~coordkit.agora.routines`). Kit agents
also answer the official library (``agora-protocol``) in its forms (:mod:`~coordkit.agora.library_wire`), and the
kit can query an agent the library serves (:mod:`~coordkit.agora.library_client`).

The model plays the screenplay one query a step; agents reach the network only through their
:class:`~coordkit.agora.services.Services`, and each decision the paper gives to an LLM is a
:class:`~coordkit.agora.roles.Role`. One query past both of D.1's thresholds, when no suitable protocol exists yet::

    model             user (agents.User)           services                     server (agents.Server)
      | step(): begin(query) |                        |                               |
      |--------------------->| check_after reached: GET /.wellknown, search its database
      |                      |-- decide(SUITABILITY) ->| rule or LLM, charged to user  |
      |                      |   none suitable and negotiate_after reached: negotiate (3 turns, App. C)
      |                      |-- negotiation_turn ---->|                               |
      |                      |== POST proposal (bootstrap protocol) ==================>|-- its turn, charged to it
      |                      |<======================================== specification ==|
      |                      |-- negotiation_turn ---->| (agreement + document)        |
      |                      |== POST agreement ======================================>|-- decide(SUITABILITY),
      |                      |-- decide(PROGRAMMER) -->| routine source                |   decide(PROGRAMMER)
      |                      |== POST query in the protocol (its routine, sandboxed) ==>|-- its routine, sandboxed
      |                      |<============================================== reply ====|
      |<- output ------------|   the frame's row: the query's tally and charges       |

Without a protocol the query goes in natural language: the user's querier writes it, the server's responder reads
it and writes the reply, the querier reads the reply (four decisions, each charged to the agent that makes it).
"""

from coordkit.agora.model import PROTOCOLS, AgoraNetwork, WeatherDemo
from coordkit.agora.protocol import protocol_hash

__all__ = ["PROTOCOLS", "AgoraNetwork", "WeatherDemo", "protocol_hash"]
