"""A BSPL protocol as data (Ahoy §2.1): roles, parameters with adornments and keys, and message schemas.

A message schema names its sender, its recipient and its parameters, each adorned ``in`` (the sender must already
know it), ``out`` (the sender binds it now) or ``nil`` (the sender must not know it). Key parameters identify an
enactment; a message's keys are the protocol's keys that it carries (RequestLabel in Logistics carries only
``orderID``, RequestWrapping ``orderID`` and ``itemID``). ``coordkit.bspl.parser`` builds these from BSPL text.
"""

from dataclasses import dataclass

ADORNMENTS = ("in", "out", "nil")


@dataclass(frozen=True)
class Parameter:
    """A parameter as declared: adorned in the ``parameters`` line and in messages, bare (None) in ``private``."""

    name: str
    adornment: str | None
    key: bool = False


@dataclass(frozen=True)
class MessageSchema:
    """``sender -> recipient: name[parameters]``, with the ``//`` comment written above it (the paper's annotation)."""

    name: str
    sender: str
    recipient: str
    parameters: tuple[Parameter, ...]
    comment: str = ""
    line: int = 0

    def _adorned(self, adornment: str) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters if p.adornment == adornment)

    @property
    def ins(self) -> tuple[str, ...]:
        return self._adorned("in")

    @property
    def outs(self) -> tuple[str, ...]:
        return self._adorned("out")

    @property
    def nils(self) -> tuple[str, ...]:
        return self._adorned("nil")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def adornment(self, name: str) -> str:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter.adornment
        raise KeyError(f"{self.name} has no parameter {name!r}; it has {', '.join(self.names)}")


@dataclass(frozen=True)
class Protocol:
    """A parsed protocol; ``text`` is its source with the comments, as the Ahoy prompts show it (§3.2)."""

    name: str
    roles: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    private: tuple[str, ...]
    messages: tuple[MessageSchema, ...]
    text: str = ""

    @property
    def public_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every parameter marked ``key``, in the ``parameters`` line or in any message, first mention first."""
        marked = [p.name for p in self.parameters if p.key]
        marked += [p.name for m in self.messages for p in m.parameters if p.key]
        return tuple(dict.fromkeys(marked))

    @property
    def enactment_keys(self) -> tuple[str, ...]:
        """The keys that every message carries: their values name the outermost enactment a message belongs to
        (Purchase: ``ID``; Logistics: ``orderID``, whose order holds the enactments of its items)."""
        return tuple(key for key in self.keys if all(key in m.names for m in self.messages))

    def keys_of(self, message: MessageSchema) -> tuple[str, ...]:
        """The protocol's key parameters that ``message`` carries, in the message's order."""
        keys = set(self.keys)
        return tuple(name for name in message.names if name in keys)

    def message(self, name: str) -> MessageSchema:
        for schema in self.messages:
            if schema.name == name:
                return schema
        raise KeyError(f"{self.name} has no message {name!r}; it has {', '.join(m.name for m in self.messages)}")

    def sent_by(self, role: str) -> tuple[MessageSchema, ...]:
        return tuple(m for m in self.messages if m.sender == self._role(role))

    def received_by(self, role: str) -> tuple[MessageSchema, ...]:
        return tuple(m for m in self.messages if m.recipient == self._role(role))

    def _role(self, role: str) -> str:
        if role not in self.roles:
            raise KeyError(f"{self.name} has no role {role!r}; its roles are {', '.join(self.roles)}")
        return role
