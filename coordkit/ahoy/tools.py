"""Ahoy's local tools (§3.3, §4.3, Listing 1.5): the LLM asks for a tool by name in ``tool_requests``; the LLM
access function runs it here, on the user's machine, and feeds the result back. Nothing the model writes is
executed: only the functions listed in ``Toolbox.names`` can run, with JSON arguments.

To add a tool, subclass :class:`Toolbox`, write a method, and add its name to ``names``; the system prompt's
``TOOLS:`` line lists it (:meth:`Toolbox.signatures`).
"""

import inspect
import json
from typing import Any


class Toolbox:
    """The tools one Ahoy agent may call, and the memory they write: ``memory[agent_name][key] = value``."""

    names: tuple[str, ...] = ("save_state_to_memory",)

    def __init__(self):
        self.memory: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, Any, str]] = []  # (tool, args, result) for every request, in order

    def save_state_to_memory(self, agent_name: str, key: str, value: Any) -> str:
        """Listing 1.5's tool: remember ``value`` under ``key`` for ``agent_name``."""
        self.memory.setdefault(str(agent_name), {})[str(key)] = value
        return f"saved {key!s} for {agent_name!s}: {json.dumps(value, default=str)}"

    def signatures(self) -> str:
        """``save_state_to_memory(agent_name, key, value)``, one per tool, as the system prompt lists them."""
        return ", ".join(
            f"{name}({', '.join(inspect.signature(getattr(self, name)).parameters)})" for name in self.names
        )

    def run_tool(self, name: Any, args: Any) -> str:
        """Run one requested tool; an unknown tool or bad arguments give an ``ERROR: ...`` string (never raises)."""
        if name not in self.names:
            result = f"ERROR: unknown tool {name!r}; available: {', '.join(self.names)}"
        elif not isinstance(args, dict):
            result = f"ERROR: {name} needs its args as a JSON object, got {args!r}"
        else:
            tool = getattr(self, name)
            try:
                inspect.signature(tool).bind(**args)
            except TypeError as error:
                result = f"ERROR: bad arguments for {name}: {error}"
            else:
                try:
                    result = str(tool(**args))
                except Exception as error:  # a tool that fails tells the model so; it never stops the run
                    result = f"ERROR: {name} failed: {error}"
        self.log.append((name, args, result))
        return result
