"""BSPL protocols as the Ahoy paper writes them (§2.1, appendix E): the data classes, the parser, and the
published protocols in ``data/protocols/`` (``load("purchase")``, ``"logistics"``, ``"flexible_purchase"``)."""

from coordkit.bspl.parser import ParseError, load, parse
from coordkit.bspl.protocol import MessageSchema, Parameter, Protocol

__all__ = ["MessageSchema", "ParseError", "Parameter", "Protocol", "load", "parse"]
