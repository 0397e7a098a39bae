"""jsonschema builds a grammar of IRIs (the ``rfc3987_syntax`` package, an Earley parser made with Lark) as it is
imported, which Altair does: about 3 s of CPU that every kernel, worker and command paid before its first chart,
though the kit never checks an IRI (python-jsonschema/jsonschema#1428). :func:`defer` puts a stand-in package in its
place whose ``is_valid_syntax`` builds the real grammar the first time it is called, and then answers as it would."""

import importlib.util
import sys
import types

PACKAGE = "rfc3987_syntax"


def defer() -> None:
    """Make the grammar wait for its first use, unless it is already loaded or not installed."""
    if PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        return
    stand_in = types.ModuleType(PACKAGE, __doc__)
    stand_in.__path__ = list(spec.submodule_search_locations)  # its own modules still import from where they are
    stand_in.is_valid_syntax = _is_valid_syntax
    sys.modules[PACKAGE] = stand_in


def _is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``, its grammar built on the first call."""
    from rfc3987_syntax.syntax_helpers import is_valid_syntax

    return is_valid_syntax(term, value)
