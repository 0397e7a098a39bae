"""Read BSPL as the Ahoy paper writes it (§2.1, Listings 1.11–1.13), and as the reference implementation (the
``bspl`` package, its grammar ``bspl.gr``) reads it, into :class:`Protocol` objects.

    Purchase {
      roles Buyer, Seller, Shipper
      parameters out ID key, out item, out price, out outcome
      private address, resp, shipped, satisfaction

      // Buyer initiates: requests a quote for an item
      Buyer -> Seller: rfq[out ID, out item]
      ...
    }

Whitespace and line breaks are free (parameter lists may span lines), the arrow may be ``->``, ``→`` or ``↦``, and
a block of ``//`` lines directly above a message becomes its ``comment`` (``#`` starts a comment too). The
reference's dialect reads as well: names with hyphens and ``@`` (``Finalize-completed``), protocol names with
spaces, the word ``protocol`` before a name, several protocols in one text (:func:`parse_all`), ``key`` before a
parameter's name, tags after a colon (``out ID: key``), ``opt`` and ``any`` in a protocol's parameters, a message to
several recipients (``A -> B, C: m[...]``), and composition: a protocol that enacts another by reference,
``Sub(RoleA, RoleB, out x key, y)``, its roles then its public parameters in the order ``Sub`` declares them
(:mod:`coordkit.bspl.composition`). Mistakes raise :class:`ParseError` with the line, the column and a hint.
``load`` reads a protocol from ``data/protocols/`` by name, or from a path.
"""

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from coordkit.bspl.composition import CompositionError, compose
from coordkit.bspl.protocol import (
    MESSAGE_ADORNMENTS,
    PROTOCOL_ADORNMENTS,
    MessageSchema,
    Parameter,
    Protocol,
    Reference,
)
from coordkit.paths import DATA

PROTOCOLS = DATA / "protocols"
KEYWORDS = ("roles", "parameters", "private", "key", *PROTOCOL_ADORNMENTS)
PUNCTUATION = "{}[],:()|"
ARROWS = ("->", "→", "↦")
NAME = re.compile(r"[\w@]+(?:-(?!>)[\w@]*)*")  # hyphens inside a name, but `A->B` is still an arrow
MESSAGE_FORM = "a message reads `Sender -> Recipient: name[...]`"


class ParseError(ValueError):
    """A mistake in BSPL text, at ``line`` and ``column`` (both from 1), with a ``hint`` on how to fix it."""

    def __init__(self, reason: str, line: int, column: int, hint: str = ""):
        self.reason, self.line, self.column, self.hint = reason, line, column, hint
        super().__init__(f"line {line}, column {column}: {reason}" + (f" ({hint})" if hint else ""))


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "->", one of PUNCTUATION, or "end"
    text: str
    line: int
    column: int

    def __str__(self) -> str:
        return "the end of the text" if self.kind == "end" else repr(self.text)


def _tokenize(text: str) -> tuple[list[_Token], dict[int, str]]:
    """The tokens, and the text of every comment that stands alone on its line, by line number."""
    tokens, comments = [], {}
    line, line_start, i = 1, 0, 0
    while i < len(text):
        char, column = text[i], i - line_start + 1
        if char == "\n":
            line, line_start, i = line + 1, i + 1, i + 1
        elif char.isspace():
            i += 1
        elif text.startswith("//", i) or char == "#":
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            if not (tokens and tokens[-1].line == line):
                comments[line] = text[i + (1 if char == "#" else 2) : end].strip()
            i = end
        elif arrow := next((a for a in ARROWS if text.startswith(a, i)), None):
            tokens.append(_Token("->", arrow, line, column))
            i += len(arrow)
        elif match := NAME.match(text, i):
            tokens.append(_Token("name", match.group(), line, column))
            i = match.end()
        elif char in PUNCTUATION:
            tokens.append(_Token(char, char, line, column))
            i += 1
        else:
            raise ParseError(
                f"unexpected character {char!r}",
                line,
                column,
                "BSPL has names, `{ } [ ] ( ) , : |`, the arrow `->` and `//` comments",
            )
    tokens.append(_Token("end", "", line, len(text) - line_start + 1))
    return tokens, comments


def _suggest(word: str, options) -> str:
    by_lower = {option.lower(): option for option in options}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]!r}?" if close else ""


def _error(token: _Token, reason: str, hint: str = "") -> ParseError:
    return ParseError(reason, token.line, token.column, hint)


class _Parser:
    """Recursive descent over the tokens; checks names against the declarations as it meets them."""

    def __init__(self, text: str):
        self.text = text
        self.tokens, self.comments = _tokenize(text)
        self.at = 0

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def at_word(self, *words: str) -> bool:
        return self.peek().kind == "name" and self.peek().text in words

    def expect(self, kind: str, expected: str, hint: str = "") -> _Token:
        if self.peek().kind != kind:
            raise _error(self.peek(), f"expected {expected}, found {self.peek()}", hint)
        return self.take()

    def keyword(self, word: str, hint: str = "") -> _Token:
        token = self.peek()
        if token.kind != "name" or token.text != word:
            raise _error(
                token,
                f"expected '{word}', found {token}",
                (_suggest(token.text, [word]) if token.kind == "name" else "") or hint,
            )
        return self.take()

    def name(self, what: str, hint: str = "") -> _Token:
        token = self.expect("name", f"a {what}", hint)
        if token.text in KEYWORDS:
            raise _error(token, f"'{token.text}' is a BSPL keyword, not a {what}", hint)
        return token

    def listed(self, item) -> list:
        """``item, item, ...``: calls ``item`` once per entry."""
        items = [item()]
        while self.peek().kind == ",":
            self.take()
            items.append(item())
        return items

    @staticmethod
    def declare(table: dict[str, _Token], token: _Token, what: str) -> None:
        if token.text in table:
            first = table[token.text]
            raise _error(
                token, f"{what} '{token.text}' is declared twice", f"first at line {first.line}, column {first.column}"
            )
        table[token.text] = token

    def document(self) -> list["_Draft"]:
        if self.peek().kind == "end":
            raise ParseError("the text holds no protocol", 1, 1, "a protocol starts with `Name {`")
        drafts = [_Draft(self).read()]
        while self.peek().kind != "end":
            if self.peek().kind != "name":
                raise _error(
                    self.peek(),
                    f"unexpected {self.peek()} after the protocol's closing '}}'",
                    "a text holds protocols, each written `Name { ... }`",
                )
            drafts.append(_Draft(self).read())
        return drafts

    def spacename(self, what: str, hint: str) -> _Token:
        """A name that may hold spaces (``Create Order``), as one token whose text joins the words by one space."""
        first = self.name(what, hint)
        words = [first.text]
        while self.peek().kind == "name" and self.peek().text not in KEYWORDS:
            words.append(self.take().text)
        return _Token("name", " ".join(words), first.line, first.column)

    def _adorned_by_mistake(self, first: _Token) -> bool:
        """Whether ``first`` stands where an adornment would, before a parameter's name on the same line."""
        following = self.peek(1)
        return (
            first.kind == "name"
            and following.kind == "name"
            and following.line == first.line
            and following.text != "key"
            and self.peek(2).kind not in ("->", "(")
        )

    def parameter(self, adornments: tuple[str, ...], where: str) -> tuple[_Token, Parameter]:
        """``[adornment] [key] name [key] [: tags]`` (the reference's ``param``); ``key`` among the tags marks a
        key too. ``adornments`` are those allowed here."""
        first = self.peek()
        adornment = None
        if first.kind == "name" and first.text in PROTOCOL_ADORNMENTS:
            if first.text not in adornments:
                raise _error(
                    first, f"'{first.text}' is not an adornment of {where}", f"use {', '.join(adornments)} there"
                )
            adornment = self.take().text
        elif self._adorned_by_mistake(first):
            raise _error(
                first,
                f"unknown adornment '{first.text}'",
                _suggest(first.text, adornments) or f"adorn with {', '.join(adornments)}",
            )
        key = self.at_word("key") and self.peek(1).kind == "name"
        if key:
            self.take()
        name = self.expect("name", "a parameter name", f"a parameter reads like `{adornments[1]} ID key`")
        if name.text in ("key", *PROTOCOL_ADORNMENTS):  # other keywords may name a parameter, as in the reference
            raise _error(name, f"'{name.text}' is a BSPL keyword, not a parameter name", "choose another name")
        if self.at_word("key"):
            self.take()
            key = True
        if self.peek().kind == ":":
            colon = self.take()
            tags = [self.expect("name", "a tag after ':'").text]
            while self.peek().kind == "name" and self.peek().line == colon.line:
                tags.append(self.take().text)
            key = key or "key" in tags
        return name, Parameter(name.text, adornment, key)


class _Draft:
    """One protocol as it is read: its declarations, and its messages and references in order."""

    def __init__(self, parser: _Parser):
        self.p = parser
        self.roles: dict[str, _Token] = {}
        self.declared: dict[str, _Token] = {}
        self.messages: dict[str, _Token] = {}
        self.written: list[_Token] = []  # the messages' names as written, in order
        self.parts: list[MessageSchema | Reference] = []

    def read(self) -> "_Draft":
        p = self.p
        if p.at_word("protocol") and p.peek(1).kind == "name":
            p.take()
        self.name = p.spacename("protocol name", "a protocol starts with `Name {`")
        self.opened = p.expect("{", "'{' after the protocol's name")
        p.keyword("roles", "the first line inside the braces lists the roles: `roles A, B`")
        self.role_tokens = p.listed(lambda: p.name("role"))
        for token in self.role_tokens:
            p.declare(self.roles, token, "role")
        self.parameters_line = p.keyword("parameters", "after the roles comes `parameters out ID key, ...`")
        self.parameters = p.listed(lambda: p.parameter(PROTOCOL_ADORNMENTS, "a protocol's parameters"))
        for token, _ in self.parameters:
            p.declare(self.declared, token, "parameter")
        self.private = []
        if p.at_word("private"):
            p.take()
            private = p.listed(lambda: p.parameter(PROTOCOL_ADORNMENTS, "a private parameter"))
            # a parameter declared public and private too is public (the reference ignores the private declaration)
            public = {token.text for token, _ in self.parameters}
            self.private = [(token, parameter) for token, parameter in private if token.text not in public]
            for token, _ in self.private:
                p.declare(self.declared, token, "parameter")
        while p.peek().kind != "}":
            if p.peek().kind == "end":
                raise _error(
                    p.peek(),
                    "missing '}' at the end of the protocol",
                    f"'{self.name.text} {{' opens at line {self.opened.line}, column {self.opened.column}",
                )
            self.parts.append(self.reference() if self._at_reference() else self.message())
        self.closed = p.take()
        return self

    def _at_reference(self) -> bool:
        """Whether a reference (``Name words(``) starts here rather than a message (``Sender ->``)."""
        ahead = 0
        while self.p.peek(ahead).kind == "name":
            ahead += 1
        return ahead > 0 and self.p.peek(ahead).kind == "("

    def role(self) -> _Token:
        token = self.p.name("role", MESSAGE_FORM)
        if token.text not in self.roles:
            raise _error(
                token,
                f"role '{token.text}' is not declared in 'roles'",
                _suggest(token.text, self.roles) or f"the roles are {', '.join(self.roles)}",
            )
        return token

    def message(self) -> MessageSchema:
        """``Sender -> Recipient[, Recipient]: name[parameter, ...]``, with the comment block directly above it
        (the colon and the brackets may be left out, as the reference allows)."""
        p = self.p
        if p.peek().kind != "name":
            raise _error(p.peek(), f"expected a message or '}}', found {p.peek()}", MESSAGE_FORM)
        sender = self.role()
        p.expect("->", "'->' after the sender", MESSAGE_FORM)
        recipients = p.listed(self.role)
        if p.peek().kind == ":":
            p.take()
        elif p.peek().kind != "name":
            raise _error(p.peek(), f"expected ':' after the recipient, found {p.peek()}", MESSAGE_FORM)
        written = p.name("message name")
        name = self.numbered(written)
        parameters = []
        if p.peek().kind == "[":
            opened = p.take()
            seen: dict[str, _Token] = {}

            def parameter() -> Parameter:
                token, parameter = p.parameter(MESSAGE_ADORNMENTS, "a message's parameters")
                if token.text not in self.declared:
                    raise _error(
                        token,
                        f"parameter '{token.text}' is not declared in 'parameters' or 'private'",
                        _suggest(token.text, self.declared) or f"declared: {', '.join(self.declared)}",
                    )
                if parameter.adornment is None:
                    raise _error(
                        token,
                        f"parameter '{token.text}' has no adornment",
                        f"write {', '.join(MESSAGE_ADORNMENTS)} before it, e.g. `in {token.text}`",
                    )
                p.declare(seen, token, f"in '{name.text}', parameter")
                return parameter

            parameters = p.listed(parameter)
            p.expect("]", "',' or ']'", f"the '[' at line {opened.line}, column {opened.column} is still open")
        return MessageSchema(
            name.text,
            sender.text,
            recipients[0].text,
            tuple(parameters),
            self.comment(sender.line),
            sender.line,
            tuple(r.text for r in recipients),
        )

    def numbered(self, written: _Token) -> _Token:
        """A message's name, numbered from its second declaration on (``offer``, ``offer2``: one name, several
        schemas, as the reference numbers them)."""
        count = sum(1 for token in self.written if token.text == written.text) + 1
        self.written.append(written)
        name = _Token("name", written.text + (str(count) if count > 1 else ""), written.line, written.column)
        self.messages[name.text] = name
        return name

    def reference(self) -> Reference:
        """``Name(argument, ...)`` or ``Name(roles | parameters)``: the roles that play the referenced protocol's
        roles, then the parameters bound to its public parameters, in its order."""
        p = self.p
        name = p.spacename("protocol name", "a reference reads `Sub(RoleA, RoleB, x key, y)`")
        p.expect("(", "'(' after the referenced protocol's name")
        arguments = p.listed(lambda: p.parameter(PROTOCOL_ADORNMENTS, "a reference's arguments"))
        if p.peek().kind == "|":
            p.take()
            arguments += p.listed(lambda: p.parameter(PROTOCOL_ADORNMENTS, "a reference's arguments"))
        p.expect(")", "',' or ')'", f"a reference to '{name.text}' is still open")
        return Reference(name.text, tuple(parameter for _, parameter in arguments), name.line)

    def comment(self, line: int) -> str:
        """The comment lines directly above ``line``, joined with spaces."""
        block = []
        while line - 1 in self.p.comments:
            line -= 1
            block.insert(0, self.p.comments[line])
        return " ".join(text for text in block if text)

    def protocol(self, text: str) -> Protocol:
        return Protocol(
            self.name.text,
            tuple(t.text for t in self.role_tokens),
            tuple(parameter for _, parameter in self.parameters),
            tuple(t.text for t, _ in self.private),
            tuple(part for part in self.parts if isinstance(part, MessageSchema)),
            text,
            references=tuple(part for part in self.parts if isinstance(part, Reference)),
            private_parameters=tuple(parameter for _, parameter in self.private),
        )

    def validate(self, protocol: Protocol) -> None:
        """What the reference refuses once references are resolved (``bspl``'s ``validate_protocol_parameters``):
        a protocol without a public key, a message without a key, an ``out`` parameter no message binds, an ``in``
        parameter (given from outside) that a message binds ``out``."""
        if not any(p.key for p in protocol.parameters):
            raise _error(
                self.parameters_line,
                "every protocol needs a key parameter: mark one with `key`",
                f"e.g. `parameters out {protocol.parameters[0].name} key, ...`",
            )
        for message in protocol.messages:
            if not protocol.keys_of(message):
                raise _error(
                    self._token_of(message),
                    f"message '{message.name}' carries no key parameter",
                    f"add one of {', '.join(protocol.keys)}",
                )
        bound = {name: m for m in protocol.messages for name in m.outs}
        for parameter in protocol.parameters:
            # (a protocol with no message yet, a draft, may leave them: the reference only warns)
            if parameter.adornment == "out" and parameter.name not in bound and protocol.messages:
                raise _error(
                    self.declared[parameter.name],
                    f"'out {parameter.name}' is bound by no message",
                    "bind it `out` in a message, or declare it `in` if it comes from outside the protocol",
                )
            if parameter.adornment == "in" and parameter.name in bound:
                message = bound[parameter.name]
                raise _error(
                    self.declared[parameter.name],
                    f"'in {parameter.name}' comes from outside the protocol, but message '{message.name}' binds it "
                    "`out`",
                    f"declare it `out`, or make '{message.name}' read it `in`",
                )

    def _token_of(self, message: MessageSchema) -> _Token:
        """Where ``message`` is written: its own name, or the reference it comes from."""
        if message.name in self.messages:
            return self.messages[message.name]
        references = [r.line for r in self.parts if isinstance(r, Reference) and message.via.startswith(r.name)]
        line = references[0] if references else self.name.line  # (a message of a reference's own reference)
        return _Token("name", message.via, line, 1)


def parse_all(text: str) -> tuple[Protocol, ...]:
    """Every protocol written in ``text``, in order, references among them resolved; raises :class:`ParseError`
    (line, column, hint) on a mistake."""
    parser = _Parser(text)
    drafts = parser.document()
    names: dict[str, _Token] = {}
    for draft in drafts:
        _Parser.declare(names, draft.name, "protocol")
    single = len(drafts) == 1
    declared = {draft.name.text: draft.protocol(text if single else _slice(text, draft)) for draft in drafts}
    for draft in drafts:
        for reference in declared[draft.name.text].references:
            if reference.name not in declared:
                token = _Token("name", reference.name, reference.line, 1)
                raise _error(
                    token,
                    f"'{draft.name.text}' refers to protocol '{reference.name}', which the text does not declare",
                    _suggest(reference.name, declared) or "declare it in the same text",
                )
    try:
        composed = compose(declared)
    except CompositionError as error:
        raise ParseError(error.reason, error.line, 1, error.hint) from None
    for draft in drafts:
        draft.validate(composed[draft.name.text])
    return tuple(composed[draft.name.text] for draft in drafts)


def parse(text: str) -> Protocol:
    """The protocol written in ``text``: its only one, or its first when it declares several (the others are the
    protocols it refers to); raises :class:`ParseError` (line, column, hint) on a mistake."""
    return parse_all(text)[0]


def _slice(text: str, draft: _Draft) -> str:
    """The lines of ``text`` from the one that names ``draft`` to the one that closes it."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[draft.name.line - 1 : draft.closed.line])


def load(name_or_path: str | Path) -> Protocol:
    """A protocol from ``data/protocols/`` by name (``"purchase"``, ``"logistics"``, ...) or from a file path.

    Raises FileNotFoundError when there is no such file, OSError naming it when it cannot be read, and
    :class:`ParseError` naming it when it is not UTF-8 text (a binary file, or text saved as Latin-1, say).
    """
    return parse(_read(name_or_path))


def load_all(name_or_path: str | Path) -> tuple[Protocol, ...]:
    """Every protocol of a file (as :func:`load` finds it), in order."""
    return parse_all(_read(name_or_path))


def _read(name_or_path: str | Path) -> str:
    path = Path(name_or_path)
    if not path.suffix and len(path.parts) == 1:
        path = PROTOCOLS / f"{path}.bspl"
    if path.is_dir():
        raise FileNotFoundError(f"{path} is a directory, not a protocol file: pass a .bspl file")
    if not path.is_file():
        available = sorted(p.stem for p in PROTOCOLS.glob("*.bspl"))
        raise FileNotFoundError(f"no protocol {str(name_or_path)!r}; available: {', '.join(available)}")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise type(error)(f"cannot read {path}: {error.strerror or error}") from error
    return _decode(path, data)


def _decode(path: Path, data: bytes) -> str:
    """``data`` as UTF-8 text (without a byte order mark), or a ParseError at the first byte that is not text."""
    if b"\0" in data:
        at = data.index(b"\0")
        reason, hint = f"{path} is a binary file, not text (a NUL byte at offset {at})", "a protocol is UTF-8 text"
    else:
        try:
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as error:
            at = error.start
            reason, hint = f"{path} is not UTF-8 text (byte {data[at]:#04x} at offset {at})", "save it as UTF-8"
    line_start = data.rfind(b"\n", 0, at) + 1
    column = len(data[line_start:at].decode("utf-8", "replace")) + 1
    raise ParseError(reason, data.count(b"\n", 0, at) + 1, column, hint)
