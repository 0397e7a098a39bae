"""Read BSPL as the Ahoy paper writes it (§2.1, Listings 1.11–1.13) into a :class:`Protocol`.

    Purchase {
      roles Buyer, Seller, Shipper
      parameters out ID key, out item, out price, out outcome
      private address, resp, shipped, satisfaction

      // Buyer initiates: requests a quote for an item
      Buyer -> Seller: rfq[out ID, out item]
      ...
    }

Whitespace and line breaks are free (parameter lists may span lines), the arrow may be ``->`` or ``→``, and a
block of ``//`` lines directly above a message becomes its ``comment``. Mistakes raise :class:`ParseError` with the
line, the column and a hint. ``load`` reads a protocol from ``data/protocols/`` by name, or from a path.
"""

import difflib
from dataclasses import dataclass
from pathlib import Path

from coordkit.bspl.protocol import ADORNMENTS, MessageSchema, Parameter, Protocol
from coordkit.paths import DATA

PROTOCOLS = DATA / "protocols"
KEYWORDS = ("roles", "parameters", "private", "key", *ADORNMENTS)
PUNCTUATION = "{}[],:"
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
    """The tokens, and the text of every ``//`` comment that stands alone on its line, by line number."""
    tokens, comments = [], {}
    line, line_start, i = 1, 0, 0
    while i < len(text):
        char, column = text[i], i - line_start + 1
        if char == "\n":
            line, line_start, i = line + 1, i + 1, i + 1
        elif char.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            if not (tokens and tokens[-1].line == line):
                comments[line] = text[i + 2 : end].strip()
            i = end
        elif char.isalpha() or char == "_":
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(_Token("name", text[i:j], line, column))
            i = j
        elif text.startswith("->", i) or char == "→":
            tokens.append(_Token("->", text[i : i + (1 if char == "→" else 2)], line, column))
            i += 1 if char == "→" else 2
        elif char in PUNCTUATION:
            tokens.append(_Token(char, char, line, column))
            i += 1
        else:
            raise ParseError(
                f"unexpected character {char!r}",
                line,
                column,
                "BSPL has names, `{ } [ ] , :`, the arrow `->` and `//` comments",
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
        self.roles: dict[str, _Token] = {}
        self.declared: dict[str, _Token] = {}
        self.messages: dict[str, _Token] = {}

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

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

    def declare(self, table: dict[str, _Token], token: _Token, what: str) -> None:
        if token.text in table:
            first = table[token.text]
            raise _error(
                token, f"{what} '{token.text}' is declared twice", f"first at line {first.line}, column {first.column}"
            )
        table[token.text] = token

    def parameter(self) -> tuple[_Token, Parameter]:
        """``adornment name [key]``."""
        first, second = self.peek(), self.peek(1)
        if first.kind != "name" or (first.text in KEYWORDS and first.text not in ADORNMENTS):
            raise _error(first, f"expected a parameter such as `out ID`, found {first}")
        if first.text not in ADORNMENTS:
            if second.kind == "name" and second.text != "key":
                raise _error(
                    first,
                    f"unknown adornment '{first.text}'",
                    _suggest(first.text, ADORNMENTS) or f"adorn with {', '.join(ADORNMENTS)}",
                )
            raise _error(
                first,
                f"parameter '{first.text}' has no adornment",
                f"write {', '.join(ADORNMENTS)} before it, e.g. `in {first.text}`",
            )
        self.take()
        name = self.name("parameter name")
        key = self.peek().kind == "name" and self.peek().text == "key"
        if key:
            self.take()
        return name, Parameter(name.text, first.text, key)

    def role(self) -> _Token:
        token = self.name("role", MESSAGE_FORM)
        if token.text not in self.roles:
            raise _error(
                token,
                f"role '{token.text}' is not declared in 'roles'",
                _suggest(token.text, self.roles) or f"the roles are {', '.join(self.roles)}",
            )
        return token

    def protocol(self) -> Protocol:
        if self.peek().kind == "end":
            raise ParseError("the text holds no protocol", 1, 1, "a protocol starts with `Name {`")
        name = self.name("protocol name", "a protocol starts with `Name {`")
        opened = self.expect("{", "'{' after the protocol's name")
        self.keyword("roles", "the first line inside the braces lists the roles: `roles A, B`")
        roles = self.listed(lambda: self.name("role"))
        for token in roles:
            self.declare(self.roles, token, "role")
        parameters_line = self.keyword("parameters", "after the roles comes `parameters out ID key, ...`")
        parameters = self.listed(self.parameter)
        for token, _ in parameters:
            self.declare(self.declared, token, "parameter")
        private = []
        if self.peek().kind == "name" and self.peek().text == "private":
            self.take()
            private = self.listed(lambda: self.name("private parameter", "private parameters take no adornment"))
            for token in private:
                self.declare(self.declared, token, "parameter")
        messages = []
        while self.peek().kind != "}":
            if self.peek().kind == "end":
                raise _error(
                    self.peek(),
                    "missing '}' at the end of the protocol",
                    f"'{name.text} {{' opens at line {opened.line}, column {opened.column}",
                )
            messages.append(self.message())
        self.take()
        if self.peek().kind != "end":
            raise _error(
                self.peek(), f"unexpected {self.peek()} after the protocol's closing '}}'", "a text holds one protocol"
            )
        protocol = Protocol(
            name.text,
            tuple(t.text for t in roles),
            tuple(p for _, p in parameters),
            tuple(t.text for t in private),
            tuple(messages),
            self.text,
        )
        self.check_keys(protocol, parameters_line)
        return protocol

    def message(self) -> MessageSchema:
        """``Sender -> Recipient: name[parameter, ...]``, with the comment block directly above it."""
        if self.peek().kind != "name":
            raise _error(self.peek(), f"expected a message or '}}', found {self.peek()}", MESSAGE_FORM)
        sender = self.role()
        self.expect("->", "'->' after the sender", MESSAGE_FORM)
        recipient = self.role()
        if recipient.text == sender.text:
            raise _error(recipient, f"{sender.text} sends a message to itself", "sender and recipient must differ")
        self.expect(":", "':' after the recipient", MESSAGE_FORM)
        name = self.name("message name")
        self.declare(self.messages, name, "message")
        opened = self.expect("[", f"'[' to open the parameters of '{name.text}'")
        seen: dict[str, _Token] = {}

        def parameter() -> Parameter:
            token, parameter = self.parameter()
            if token.text not in self.declared:
                raise _error(
                    token,
                    f"parameter '{token.text}' is not declared in 'parameters' or 'private'",
                    _suggest(token.text, self.declared) or f"declared: {', '.join(self.declared)}",
                )
            self.declare(seen, token, f"in '{name.text}', parameter")
            return parameter

        parameters = self.listed(parameter)
        self.expect("]", "',' or ']'", f"the '[' at line {opened.line}, column {opened.column} is still open")
        return MessageSchema(
            name.text, sender.text, recipient.text, tuple(parameters), self.comment(sender.line), sender.line
        )

    def comment(self, line: int) -> str:
        """The ``//`` lines directly above ``line``, joined with spaces."""
        block = []
        while line - 1 in self.comments:
            line -= 1
            block.insert(0, self.comments[line])
        return " ".join(text for text in block if text)

    def check_keys(self, protocol: Protocol, parameters_line: _Token) -> None:
        if not protocol.keys:
            raise _error(
                parameters_line,
                "every protocol needs a key parameter: mark one with `key`",
                f"e.g. `parameters out {protocol.parameters[0].name} key, ...`",
            )
        for message in protocol.messages:
            if not protocol.keys_of(message):
                raise _error(
                    self.messages[message.name],
                    f"message '{message.name}' carries no key parameter",
                    f"add one of {', '.join(protocol.keys)}",
                )


def parse(text: str) -> Protocol:
    """The protocol written in ``text``; raises :class:`ParseError` (line, column, hint) on a mistake."""
    return _Parser(text).protocol()


def load(name_or_path: str | Path) -> Protocol:
    """A protocol from ``data/protocols/`` by name (``"purchase"``, ``"logistics"``, ...) or from a file path.

    Raises FileNotFoundError when there is no such file, OSError naming it when it cannot be read, and
    :class:`ParseError` naming it when it is not UTF-8 text (a binary file, or text saved as Latin-1, say).
    """
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
    return parse(_decode(path, data))


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
