"""BSPL protocols as the Ahoy paper writes them (§2.1, appendix E): the data classes, the parser, and the
published protocols in ``data/protocols/`` (``load("purchase")``, ``"logistics"``, ``"flexible_purchase"``)."""

from coordkit.bspl.parser import ParseError, load, load_all, parse, parse_all
from coordkit.bspl.protocol import MessageSchema, Parameter, Protocol, Reference

__all__ = [
    "MessageSchema",
    "ParseError",
    "Parameter",
    "Protocol",
    "Reference",
    "load",
    "load_all",
    "parse",
    "parse_all",
]
