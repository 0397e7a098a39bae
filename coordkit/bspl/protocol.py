"""A BSPL protocol as data (Ahoy §2.1): roles, parameters with adornments and keys, and message schemas.

A message schema names its sender, its recipient and its parameters, each adorned ``in`` (the sender must already
know it), ``out`` (the sender binds it now) or ``nil`` (the sender must not know it). Key parameters identify an
enactment; a message's keys are the protocol's keys that it carries (RequestLabel in Logistics carries only
``orderID``, RequestWrapping ``orderID`` and ``itemID``). ``coordkit.bspl.parser`` builds these from BSPL text.
"""

from dataclasses import dataclass

MESSAGE_ADORNMENTS = ("in", "out", "nil")
# a protocol's parameters may also be `opt` (bound or not when the enactment ends) or `any` (either way), as the
# reference implementation's grammar allows (bspl.gr, `protocol_adornment`)
PROTOCOL_ADORNMENTS = (*MESSAGE_ADORNMENTS, "any", "opt")


@dataclass(frozen=True)
class Parameter:
    """A parameter as declared: adorned in the ``parameters`` line and in messages, bare (None) in ``private``."""

    name: str
    adornment: str | None
    key: bool = False


@dataclass(frozen=True)
class MessageSchema:
    """``sender -> recipient: name[parameters]``, with the ``//`` comment written above it (the paper's annotation).

    ``recipients`` lists every recipient when the message goes to several (``A -> B, C: m[...]``; ``recipient`` is
    the first); ``via`` names the referenced protocol a composed message comes from (``""``: the protocol's own)."""

    name: str
    sender: str
    recipient: str
    parameters: tuple[Parameter, ...]
    comment: str = ""
    line: int = 0
    recipients: tuple[str, ...] = ()
    via: str = ""

    def __post_init__(self):
        if not self.recipients:
            object.__setattr__(self, "recipients", (self.recipient,))

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
class Reference:
    """A protocol enacted by reference inside another (composition): ``Sub(RoleA, RoleB, out x key, y)``, the
    arguments being the roles that play ``Sub``'s roles, then the parameters bound to its public parameters."""

    name: str
    arguments: tuple[Parameter, ...]
    line: int = 0


@dataclass(frozen=True)
class Protocol:
    """A parsed protocol; ``text`` is its source with the comments, as the Ahoy prompts show it (§3.2).

    ``messages`` are its own messages and, after them, those of the protocols it ``references`` (composed,
    :mod:`coordkit.bspl.composition`); ``private_parameters`` are its private parameters as declared (adornment
    None where there is none, as the paper writes them)."""

    name: str
    roles: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    private: tuple[str, ...]
    messages: tuple[MessageSchema, ...]
    text: str = ""
    references: tuple[Reference, ...] = ()
    private_parameters: tuple[Parameter, ...] = ()

    @property
    def own_messages(self) -> tuple[MessageSchema, ...]:
        """The messages the protocol declares itself (not those it enacts by reference)."""
        return tuple(m for m in self.messages if not m.via)

    @property
    def public_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def keys(self) -> tuple[str, ...]:
        """The protocol's keys: the parameters declared ``key`` in its ``parameters`` line (or among its private
        ones), in that order. A message may mark more of its own (:meth:`keys_of`)."""
        return tuple(p.name for p in (*self.parameters, *self.private_parameters) if p.key)

    @property
    def enactment_keys(self) -> tuple[str, ...]:
        """The keys that every message carries: their values name the outermost enactment a message belongs to
        (Purchase: ``ID``; Logistics: ``orderID``, whose order holds the enactments of its items)."""
        return tuple(key for key in self.keys if all(key in m.names for m in self.messages))

    def keys_of(self, message: MessageSchema) -> tuple[str, ...]:
        """The key parameters of ``message``, in its order: the protocol's keys it carries, and those it marks
        ``key`` itself (``offer[in id, out oid key, ...]``: an offer per ``oid``), as the reference reads a
        message's key."""
        keys = set(self.keys)
        return tuple(p.name for p in message.parameters if p.name in keys or p.key)

    def message(self, name: str) -> MessageSchema:
        for schema in self.messages:
            if schema.name == name:
                return schema
        raise KeyError(f"{self.name} has no message {name!r}; it has {', '.join(m.name for m in self.messages)}")

    def sent_by(self, role: str) -> tuple[MessageSchema, ...]:
        return tuple(m for m in self.messages if m.sender == self._role(role))

    def received_by(self, role: str) -> tuple[MessageSchema, ...]:
        return tuple(m for m in self.messages if self._role(role) in m.recipients)

    def _role(self, role: str) -> str:
        if role not in self.roles:
            raise KeyError(f"{self.name} has no role {role!r}; its roles are {', '.join(self.roles)}")
        return role
