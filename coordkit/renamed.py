"""Old names kept for one release after a rename (issue 45: a name means one thing), each warning as it is used.

A module that renamed a public name declares ``__getattr__ = renamed(__name__, {"Old": "New"}, globals())``; the
old name then still imports, with a DeprecationWarning that names the new one. CHANGELOG.md lists every rename
under "Renamed"; the next release drops the old names, and this module with them.
"""

import warnings
from collections.abc import Callable
from typing import Any


def renamed(module: str, names: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that answers each old name in ``names`` with its new one, warning."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = names[name]
        warnings.warn(
            f"{module}.{name} is now {new}; the old name goes in the next release", DeprecationWarning, stacklevel=2
        )
        return namespace[new]

    return __getattr__


def warn_renamed(old: str, new: str) -> None:
    """Warn that ``old`` (a method, say) is now ``new``, pointing at the caller's caller."""
    warnings.warn(f"{old} is now {new}; the old name goes in the next release", DeprecationWarning, stacklevel=3)
