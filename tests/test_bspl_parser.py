"""The BSPL parser: the paper's protocols (Ahoy, Listings 1.11–1.13) as data, errors that point at the mistake, and
no exception but ParseError on any text."""

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.bspl import MessageSchema, Parameter, ParseError, Protocol, load, parse, parse_all
from coordkit.bspl.parser import PROTOCOLS

NAMES = ("purchase", "logistics", "flexible_purchase", "flexible_purchase_corrected")
PURCHASE, LOGISTICS = load("purchase"), load("logistics")


@pytest.mark.parametrize("name", NAMES)
def test_every_protocol_file_parses_and_every_message_has_a_comment(name):
    protocol = load(name)
    assert isinstance(protocol, Protocol) and protocol.text == (PROTOCOLS / f"{name}.bspl").read_text()
    assert all(isinstance(m, MessageSchema) and m.comment and m.line > 0 for m in protocol.messages)
    assert sorted(p.stem for p in PROTOCOLS.glob("*.bspl")) == sorted(NAMES)


def test_purchase_as_in_listing_1_11():
    assert PURCHASE.name == "Purchase" and PURCHASE.roles == ("Buyer", "Seller", "Shipper")
    assert PURCHASE.parameters == (
        Parameter("ID", "out", True),
        Parameter("item", "out"),
        Parameter("price", "out"),
        Parameter("outcome", "out"),
    )
    assert PURCHASE.public_names == ("ID", "item", "price", "outcome")
    assert PURCHASE.private == ("address", "resp", "shipped", "satisfaction")
    assert [m.name for m in PURCHASE.messages] == ["rfq", "quote", "accept", "reject", "ship", "deliver", "completed"]
    assert PURCHASE.keys == ("ID",) and all(PURCHASE.keys_of(m) == ("ID",) for m in PURCHASE.messages)
    accept = PURCHASE.message("accept")
    assert (accept.sender, accept.recipient) == ("Buyer", "Seller")
    assert accept.ins == ("ID", "item", "price") and accept.outs == ("address", "resp") and accept.nils == ()
    assert accept.names == ("ID", "item", "price", "address", "resp") and accept.adornment("price") == "in"
    assert accept.line == 13
    assert PURCHASE.message("reject").comment == (
        "Buyer rejects: provides outcome reason and response/feedback (mutually exclusive with accept)"
    )


def test_logistics_has_nested_keys_and_a_parameter_list_over_two_lines():
    assert LOGISTICS.roles == ("Merchant", "Wrapper", "Labeler", "Packer")
    assert LOGISTICS.keys == ("orderID", "itemID")
    assert LOGISTICS.keys_of(LOGISTICS.message("RequestLabel")) == ("orderID",)
    assert LOGISTICS.keys_of(LOGISTICS.message("RequestWrapping")) == ("orderID", "itemID")
    assert LOGISTICS.keys_of(LOGISTICS.message("Labeled")) == ("orderID",)
    label = LOGISTICS.message("RequestLabel")
    assert label.parameters == (Parameter("orderID", "out", True), Parameter("address", "out"))
    packed = LOGISTICS.message("Packed")
    assert packed.ins == ("orderID", "itemID", "item", "wrapping", "label") and packed.outs == ("status",)
    assert packed.comment == "Packer completes: all items assembled and packed"


def test_flexible_purchase_and_its_correction_differ_by_two_nil_parameters():
    published, corrected = load("flexible_purchase"), load("flexible_purchase_corrected")
    assert published.roles == ("FlexibleCustomer", "FlexibleMerchant") and published.keys == ("ID",)
    assert published.message("standard_delivery").nils == ("express_delivery",)
    assert published.message("pay_express").comment == "Customer pays for express: payment for express delivery option"
    changed = {m.name: m.nils for m in corrected.messages if m.nils != published.message(m.name).nils}
    assert changed == {
        "standard_delivery_request": ("express_delivery",),
        "express_delivery_request": ("standard_delivery",),
    }
    assert [m.comment for m in corrected.messages] == [m.comment for m in published.messages]
    assert corrected.text.startswith("// FlexiblePurchase") and "live" in corrected.text.splitlines()[0]


def test_the_unicode_arrow_and_free_layout_read_the_same():
    text = PURCHASE.text.replace("->", "→").replace(", ", ",\n      ")
    protocol = parse(text)
    assert [(m.name, m.sender, m.recipient, m.parameters, m.comment) for m in protocol.messages] == [
        (m.name, m.sender, m.recipient, m.parameters, m.comment) for m in PURCHASE.messages
    ]


def test_only_a_comment_block_directly_above_a_message_is_its_comment():
    protocol = parse(
        "P {\n roles A, B\n parameters out x key\n // far away\n\n A -> B: m[out x] // trailing\n"
        " // first\n //\n // second\n B -> A: n[in x]\n}"
    )
    assert [m.comment for m in protocol.messages] == ["", "first second"]


@pytest.mark.parametrize("protocol", [PURCHASE, LOGISTICS, load("flexible_purchase")], ids=lambda p: p.name)
def test_sent_by_and_received_by_partition_the_messages(protocol):
    for role in protocol.roles:
        assert all(m.sender == role for m in protocol.sent_by(role))
        assert all(m.recipient == role for m in protocol.received_by(role))
    assert sorted(m.name for r in protocol.roles for m in protocol.sent_by(r)) == sorted(
        m.name for m in protocol.messages
    )
    assert sorted(m.name for r in protocol.roles for m in protocol.received_by(r)) == sorted(
        m.name for m in protocol.messages
    )
    assert PURCHASE.sent_by("Shipper") == (PURCHASE.message("deliver"),)


def test_lookups_name_what_is_there():
    with pytest.raises(KeyError, match="rfq, quote, accept"):
        PURCHASE.message("pay")
    with pytest.raises(KeyError, match="Buyer, Seller, Shipper"):
        PURCHASE.sent_by("Bank")
    with pytest.raises(KeyError, match="ID, item"):
        PURCHASE.message("rfq").adornment("price")
    with pytest.raises(FileNotFoundError, match="flexible_purchase, flexible_purchase_corrected, logistics, purchase"):
        load("purchas")


MINE = "Mine {\n roles A, B\n parameters out id key\n A -> B: hello[out id]\n}\n"


def test_load_reads_a_path_too(tmp_path):
    path = tmp_path / "mine.bspl"
    path.write_text(MINE)
    assert load(path).message("hello").outs == ("id",) and load(str(path)).name == "Mine"
    path.write_bytes(b"\xef\xbb\xbf" + MINE.encode())  # UTF-8 with a byte order mark, as some editors save it
    assert load(path).text == MINE


@pytest.mark.parametrize(
    "data, reason, line, column",
    [
        (
            MINE.replace("Mine {", "Mine {\n // café").encode("latin-1"),
            "is not UTF-8 text (byte 0xe9 at offset 14)",
            2,
            8,
        ),
        (bytes(range(256)), "is a binary file, not text (a NUL byte at offset 0)", 1, 1),
    ],
    ids=["latin-1", "binary"],
)
def test_a_file_that_is_not_utf8_text_gives_a_parse_error_naming_it(tmp_path, data, reason, line, column):
    path = tmp_path / "mine.bspl"
    path.write_bytes(data)
    with pytest.raises(ParseError) as raised:
        load(path)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert str(raised.value).startswith(f"line {line}, column {column}: {path} {reason} (")
    assert "UTF-8" in raised.value.hint


def test_a_directory_or_an_unreadable_file_gives_an_error_naming_it(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path} is a directory, not a protocol file")):
        load(tmp_path)
    path = tmp_path / "mine.bspl"
    path.write_text(MINE)

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # chmod cannot make a file unreadable to root
    with pytest.raises(PermissionError, match=re.escape(f"cannot read {path}: Permission denied")):
        load(path)


GOOD = """Purchase {
  roles Buyer, Seller
  parameters out ID key, out item, out price
  private address

  Buyer -> Seller: rfq[out ID, out item]
  Seller -> Buyer: quote[in ID, in item, out price]
}
"""


def bad(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize(
    "text, line, column, reason, hint",
    [
        (
            bad("out item]", "out item, out adress]"),
            6,
            46,
            "parameter 'adress' is not declared in 'parameters' or 'private'",
            "did you mean 'address'?",
        ),
        (
            bad("Seller -> Buyer", "Seler -> Buyer"),
            7,
            3,
            "role 'Seler' is not declared in 'roles'",
            "did you mean 'Seller'?",
        ),
        (
            bad("out ID key,", "out ID,"),
            3,
            3,
            "every protocol needs a key parameter: mark one with `key`",
            "parameters out ID key",
        ),
        (bad("rfq[out ID", "rfq[ID"), 6, 24, "parameter 'ID' has no adornment", "`in ID`"),
        (bad("rfq[out ID", "rfq[ot ID"), 6, 24, "unknown adornment 'ot'", "did you mean 'out'?"),
        (
            bad("out item]", "out item, in ID]"),
            6,
            45,
            "in 'rfq', parameter 'ID' is declared twice",
            "line 6, column 28",
        ),
        (
            bad("out item]", "out item"),
            7,
            3,
            "expected ',' or ']', found 'Seller'",
            "'[' at line 6, column 23 is still open",
        ),
        (
            GOOD.rstrip().removesuffix("}"),
            8,
            1,
            "missing '}' at the end of the protocol",
            "'Purchase {' opens at line 1, column 10",
        ),
        (GOOD + "}\n", 9, 1, "unexpected '}' after the protocol's closing '}'", "each written `Name { ... }`"),
        (
            bad("Seller: rfq", "Seller; rfq"),
            6,
            18,
            "unexpected character ';'",
            "`->`",
        ),
        (bad("out price]", "out price];"), 7, 52, "unexpected character ';'", "`->`"),
        (bad("roles", "role"), 2, 3, "expected 'roles', found 'role'", "did you mean 'roles'?"),
        (bad("roles Buyer, Seller", "roles Buyer, Seller, Buyer"), 2, 24, "role 'Buyer' is declared twice", "line 2"),
        (bad("private address", "private address, address"), 4, 20, "parameter 'address' is declared twice", "line 4"),
        (
            bad("Seller -> Buyer: quote[in ID, in item", "Seller -> Buyer: quote[in item"),
            7,
            20,
            "message 'quote' carries no key parameter",
            "add one of ID",
        ),
        (bad("rfq[out ID", "rfq[opt ID"), 6, 24, "'opt' is not an adornment of a message's parameters", "in, out"),
        (
            bad("  Seller -> Buyer: quote", "  Sub(Buyer, ID)\n  Seller -> Buyer: quote"),
            7,
            1,
            "'Purchase' refers to protocol 'Sub', which the text does not declare",
            "same text",
        ),
        ("", 1, 1, "the text holds no protocol", "`Name {`"),
        ("  // only a comment\n\n", 1, 1, "the text holds no protocol", "`Name {`"),
    ],
    ids=[
        "undeclared-parameter",
        "unknown-role",
        "no-key",
        "no-adornment",
        "unknown-adornment",
        "duplicate-parameter",
        "unclosed-bracket",
        "unclosed-brace",
        "extra-brace",
        "bad-separator",
        "bad-character",
        "keyword-typo",
        "duplicate-role",
        "parameter-declared-twice",
        "message-without-key",
        "opt-in-a-message",
        "undeclared-reference",
        "empty",
        "comment-only",
    ],
)
def test_a_mistake_is_reported_where_it_is_with_a_hint(text, line, column, reason, hint):
    with pytest.raises(ParseError) as caught:
        parse(text)
    error = caught.value
    assert (error.line, error.column, error.reason) == (line, column, reason)
    assert hint in error.hint
    assert str(error) == f"line {line}, column {column}: {reason} ({error.hint})"
    assert isinstance(error, ValueError)


def test_the_message_reads_as_in_the_brief():
    with pytest.raises(
        ParseError,
        match=r"^line 6, column 46: parameter 'adress' is not declared in 'parameters' or "
        r"'private' \(did you mean 'address'\?\)$",
    ):
        parse(bad("out item]", "out item, out adress]"))


def check_only_parse_errors(text: str) -> None:
    try:
        protocol = parse(text)
    except ParseError as error:
        assert 1 <= error.line <= text.count("\n") + 1 and error.column >= 1 and error.reason
    else:
        assert protocol.keys and all(protocol.keys_of(m) for m in protocol.messages)


@settings(max_examples=300)
@given(st.text())
def test_any_text_gives_a_protocol_or_a_parse_error(text):
    check_only_parse_errors(text)


BSPL_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "->",
        "→",
        "//",
        "\n",
        " ",
        "key",
        "in",
        "out",
        "nil",
        "roles",
        "parameters",
        "private",
        "ID",
        "A",
        "B",
        "m",
        "-",
        ";",
        "é",
        "\t",
        "\r",
    ]
)


@settings(max_examples=300)
@given(st.lists(BSPL_PIECES, max_size=40).map(" ".join))
def test_bspl_like_soup_gives_a_protocol_or_a_parse_error(text):
    check_only_parse_errors(text)


@settings(max_examples=500)
@given(name=st.sampled_from(NAMES), data=st.data())
def test_mutations_of_a_protocol_give_a_protocol_or_a_parse_error(name, data):
    text = (PROTOCOLS / f"{name}.bspl").read_text()
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        start = data.draw(st.integers(0, len(text)), label="at")
        if data.draw(st.booleans(), label="delete"):
            text = text[:start] + text[start + data.draw(st.integers(1, 12), label="length") :]
        else:
            text = (
                text[:start] + data.draw(st.text(min_size=1, max_size=3) | BSPL_PIECES, label="insert") + text[start:]
            )
    check_only_parse_errors(text)


REFERENCE_DIALECT = """# the reference implementation's dialect (bspl.gr)
protocol Create Order {
  roles Buyer, Seller, Bank
  parameters out key order-id, out item: tag, opt note, any total
  private out receipt

  Buyer ↦ Seller rfq[out order-id, out item]
  Seller -> Buyer, Bank: offer[in order-id, in item, out total]
  Bank -> Bank: audit[in order-id, out receipt]
  Pay(Buyer, Bank, order-id, total)
}

Pay {
  roles Payer, Payee
  parameters in id key, in amount
  private paid

  Payer -> Payee: pay[in id, in amount, out paid]
}
"""


def test_the_reference_dialect_reads():
    """Names with hyphens and spaces, `protocol`, `#` comments, `key` first, tags, `opt`/`any`, `↦` without a colon,
    several recipients, a message to oneself, an adorned private parameter, and composition (bspl.gr)."""
    order, pay = parse_all(REFERENCE_DIALECT)
    assert (order.name, pay.name) == ("Create Order", "Pay") and parse(REFERENCE_DIALECT) == order
    assert order.parameters == (
        Parameter("order-id", "out", True),
        Parameter("item", "out"),
        Parameter("note", "opt"),
        Parameter("total", "any"),
    )
    assert order.private == ("receipt",) and order.private_parameters == (Parameter("receipt", "out"),)
    assert order.message("rfq").recipients == ("Seller",) and order.message("offer").recipients == ("Buyer", "Bank")
    assert order.message("audit").sender == order.message("audit").recipient == "Bank"
    assert [m.name for m in order.own_messages] == ["rfq", "offer", "audit"]
    composed = order.message("Pay/pay")
    assert (composed.sender, composed.recipients, composed.via) == ("Buyer", ("Bank",), "Pay")
    assert composed.parameters == (
        Parameter("order-id", "in", True),  # Pay's key stays a key, under the bound name
        Parameter("total", "in"),
        Parameter("paid", "out"),  # Pay's private parameter keeps its name
    )
    assert order.received_by("Bank") == (order.message("offer"), order.message("audit"), composed)


@pytest.mark.parametrize(
    "reference, reason",
    [
        (
            "Pay(Buyer, order-id, total)",
            "'Pay' takes 2 roles and 2 parameters, 4 arguments in all; Create Order gives 3",
        ),
        (
            "Pay(Buyer, Clerk, order-id, total)",
            "'Pay' gives its role Payee to 'Clerk', which Create Order does not declare",
        ),
        (
            "Pay(Buyer, Bank, order-id, price)",
            "parameter 'price' bound to Pay's amount is not declared in Create Order",
        ),
    ],
)
def test_a_reference_that_cannot_be_enacted_is_reported_at_its_line(reference, reason):
    with pytest.raises(ParseError) as caught:
        parse_all(REFERENCE_DIALECT.replace("Pay(Buyer, Bank, order-id, total)", reference))
    assert (caught.value.line, caught.value.reason) == (10, reason)


def test_protocols_that_refer_to_each_other_in_a_cycle_are_refused():
    text = REFERENCE_DIALECT.replace(
        "  Payer -> Payee:", "  Create Order(Payer, Payee, Payee, id, amount, x, y)\n  Payer -> Payee:"
    )
    with pytest.raises(ParseError, match="cycle: Create Order → Pay → Create Order"):
        parse_all(text)


def test_a_reference_inside_a_referenced_protocol_is_flattened_too():
    text = """Outer {
  roles A, B
  parameters out id key, out done
  Middle(A, B, id, done)
}

Middle {
  roles X, Y
  parameters out id key, out done
  X -> Y: begin[out id]
  Inner(Y, X, id, done)
}

Inner {
  roles P, Q
  parameters in id key, out done
  P -> Q: finish[in id, out done]
}
"""
    outer = parse(text)
    assert [(m.name, m.sender, m.recipient, m.via) for m in outer.messages] == [
        ("Middle/begin", "A", "B", "Middle"),
        ("Inner/finish", "B", "A", "Inner"),
    ]


def test_a_message_name_written_twice_is_numbered_and_a_private_copy_of_a_public_parameter_is_dropped():
    """As the reference reads them: `offer` twice is `offer` and `offer2` (two schemas, one name as written); a
    parameter declared public and private is public; `private` may name a parameter."""
    protocol = parse("""Haggle {
  roles B, S
  parameters out id key, out price
  private price, private
  B -> S: ask[out id]
  S -> B: offer[in id, out price]
  S -> B: offer[in id, out price, out private]
}""")
    assert [m.name for m in protocol.messages] == ["ask", "offer", "offer2"]
    assert protocol.private == ("private",) and protocol.public_names == ("id", "price")
