"""BSPL semantics and the verifier: enabledness (nested keys included), emission and reception checks, random
enactments that never let a violation through, liveness of the paper's protocols, and the verifier's state limit."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.bspl import verifier
from coordkit.bspl.parser import ParseError, load, parse
from coordkit.bspl.semantics import EmissionViolation, Instance, IntegrityViolation, LocalState
from coordkit.bspl.verifier import verify

PURCHASE = load("purchase")
LOGISTICS = load("logistics")


def names(forms):
    return sorted(f.schema.name for f in forms)


def test_a_buyer_starts_with_rfq_and_a_seller_can_quote_once_it_has_heard():
    buyer, seller = LocalState(PURCHASE, ("Buyer",)), LocalState(PURCHASE, ("Seller",))
    assert names(buyer.enabled()) == ["rfq"] and seller.enabled() == []
    rfq = buyer.send(Instance.of(PURCHASE, "rfq", ID="1", item="pen"))
    seller.receive(rfq)
    (quote,) = seller.enabled()
    assert (
        quote.schema.name == "quote" and dict(quote.known) == {"ID": "1", "item": "pen"} and quote.missing == ("price",)
    )
    seller.send(quote.bind(PURCHASE, price=4))
    assert seller.enabled() == []  # quoted once in this enactment
    assert names(buyer.enabled()) == ["rfq"]  # a new rfq starts a new enactment


def test_accept_and_reject_exclude_each_other():
    buyer = LocalState(PURCHASE, ("Buyer",))
    buyer.send(Instance.of(PURCHASE, "rfq", ID="1", item="pen"))
    buyer.receive(Instance.of(PURCHASE, "quote", ID="1", item="pen", price=4))
    assert names(buyer.enabled()) == ["accept", "completed", "reject", "rfq"]
    buyer.send(Instance.of(PURCHASE, "accept", ID="1", item="pen", price=4, address="Main St", resp="yes"))
    assert "reject" not in names(buyer.enabled())  # its out resp is known now
    with pytest.raises(EmissionViolation, match="already bound"):
        buyer.send(Instance.of(PURCHASE, "reject", ID="1", item="pen", price=4, outcome="no", resp="no"))


def test_nested_keys_let_an_order_s_label_reach_its_items():
    merchant, packer = LocalState(LOGISTICS, ("Merchant",)), LocalState(LOGISTICS, ("Packer",))
    label = merchant.send(Instance.of(LOGISTICS, "RequestLabel", orderID="o1", address="Alice"))
    wrap_forms = [f for f in merchant.enabled() if f.schema.name == "RequestWrapping"]
    assert [dict(f.known) for f in wrap_forms] == [{"orderID": "o1"}]
    merchant.send(wrap_forms[0].bind(LOGISTICS, itemID="i1", item="vase"))
    packer.receive(Instance.of(LOGISTICS, "Wrapped", orderID="o1", itemID="i1", item="vase", wrapping="bubble"))
    assert names(packer.enabled()) == []  # no label yet for order o1
    packer.receive(Instance.of(LOGISTICS, "Labeled", orderID="o1", address="Alice", label="L1"))
    (packed,) = packer.enabled()
    assert dict(packed.known)["label"] == "L1"  # known through the order's key alone
    assert label.key_bindings == {"orderID": "o1"}


@pytest.mark.parametrize(
    "instance, message",
    [
        (Instance.of(PURCHASE, "quote", ID="1", item="pen", price=4), "sent by Seller"),
        (Instance.of(PURCHASE, "accept", ID="9", item="pen", price=4, address="x", resp="y"), "not known"),
        (Instance.of(PURCHASE, "rfq", ID="1"), "unbound"),
        (Instance.of(PURCHASE, "rfq", ID="1", item="cup"), "already used"),
    ],
)
def test_emission_violations_are_clear_and_nothing_is_sent(instance, message):
    buyer = LocalState(PURCHASE, ("Buyer",))
    buyer.send(Instance.of(PURCHASE, "rfq", ID="1", item="pen"))
    before = list(buyer.history)
    with pytest.raises(EmissionViolation, match=message):
        buyer.send(instance)
    assert buyer.history == before


def test_a_conflicting_reception_is_an_integrity_violation():
    seller = LocalState(PURCHASE, ("Seller",))
    seller.receive(Instance.of(PURCHASE, "rfq", ID="1", item="pen"))
    with pytest.raises(IntegrityViolation, match="knows 'pen', received 'cup'"):
        seller.receive(Instance.of(PURCHASE, "accept", ID="1", item="cup", price=4, address="x", resp="y"))


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20), st.integers(0, 3), st.booleans()), max_size=40))
def test_random_choices_and_bindings_never_get_a_violating_message_through(moves):
    """Agents try random enabled forms and random arbitrary instances; whatever gets sent and received keeps every
    enactment's bindings consistent, and every sent instance's ins were known to its sender."""
    roles = PURCHASE.roles
    agents = {role: LocalState(PURCHASE, (role,)) for role in roles}
    values = ["a", "b", "c", "d"]
    for who, pick, value, arbitrary in moves:
        agent = agents[roles[who]]
        if arbitrary:
            schema = PURCHASE.messages[pick % len(PURCHASE.messages)]
            bindings = {n: values[(value + i) % 4] for i, n in enumerate((*schema.ins, *schema.outs))}
            instance = Instance.of(PURCHASE, schema, **bindings)
        else:
            forms = agent.enabled()
            if not forms:
                continue
            form = forms[pick % len(forms)]
            instance = form.bind(PURCHASE, **{n: f"{n}{value}{pick}" for n in form.missing})
        knew = agent.knowledge({k: v for k, v in instance.key_bindings.items()})
        try:
            agent.send(instance)
        except EmissionViolation:
            continue
        assert all(knew.get(n) == v for n, v in instance.bindings if n in instance.schema.ins)
        try:
            agents[instance.schema.recipient].receive(instance)
        except IntegrityViolation:
            pass
    for agent in agents.values():
        for first in agent.history:
            for second in agent.history:
                same = first.key_bindings and first.key_bindings == second.key_bindings
                if same:
                    shared = set(first.payload) & set(second.payload)
                    assert all(first.payload[n] == second.payload[n] for n in shared)


def test_the_published_flexible_purchase_is_not_live_and_the_corrected_one_is():
    published = verify(load("flexible_purchase"))
    assert published.safe and not published.live and "done" in published.unbound
    trace = " ".join(published.liveness_counterexample)
    assert "standard_delivery_request" in trace and "express_delivery_request" in trace
    corrected = verify(load("flexible_purchase_corrected"))
    assert corrected.safe and corrected.live


@pytest.mark.parametrize("name", ["purchase", "logistics"])
def test_the_papers_other_protocols_are_safe_and_live(name):
    report = verify(load(name))
    assert report.safe and report.live and report.states > 5


def test_the_verifier_finds_an_unsafe_protocol():
    clash = parse("""Clash {
      roles A, B
      parameters out id key, out x
      A -> B: start[out id]
      A -> B: one[in id, out x]
      B -> A: two[in id, out x]
    }""")
    report = verify(clash)
    assert not report.safe and report.safety_counterexample


WIDE = parse(  # A starts an enactment, then may send 13 messages in any order: 2·3¹³ + 1 (3.2 million) states
    "Wide {\n  roles A, B\n  parameters out id key, "
    + ", ".join(f"out p{i}" for i in range(1, 14))
    + "\n  A -> B: start[out id]\n"
    + "".join(f"  A -> B: m{i}[in id, out p{i}]\n" for i in range(1, 14))
    + "}"
)
FORK = (  # B's clash binds z as A's mine does, once one and two have arrived; then 12 more messages for B
    "Fork {\n  roles A, B\n  parameters out id key, out x, out y, out z, "
    + ", ".join(f"out q{i}" for i in range(1, 13))
    + "\n  A -> B: start[out id]\n  A -> B: one[in id, out x]\n  A -> B: two[in id, out y]\n"
    + "  A -> B: mine[in id, out z]\n  B -> A: clash[in id, in x, in y, out z]\n"
    + "".join(f"  B -> A: f{i}[in id, in x, in y, out q{i}]\n" for i in range(1, 13))
    + "}"
)


def test_a_protocol_too_large_stops_at_max_states_and_says_so():
    report = verify(WIDE, max_states=5000)
    assert not report.complete and report.states == 5000
    assert report.safe is None and report.live is None  # unknown, never True on a partial search
    assert str(report) == (
        "Wide: too large to verify exhaustively; 5,000 states explored (max_states=5,000) — no conflict or stuck "
        "state among them"
    )


def test_a_violation_found_before_the_limit_is_reported():
    report = verify(parse(FORK), max_states=5000)
    assert not report.complete and report.safe is False and report.live is None
    assert str(report).splitlines() == [
        "Fork: NOT safe, liveness unknown — too large to verify exhaustively; 5,000 states explored (max_states=5,000)",
        "  conflict after: A→B: start → A→B: one → A→B: two → A→B: mine → one arrives → two arrives → B→A: clash",
    ]


def test_a_search_is_complete_when_it_explores_every_state_within_the_limit():
    assert verify(PURCHASE).states == 31
    exactly = verify(PURCHASE, max_states=31)
    assert exactly.complete and exactly.safe and exactly.live and str(exactly) == "Purchase: safe, live (31 states)"
    one_short = verify(PURCHASE, max_states=30)
    assert not one_short.complete and one_short.safe is None and one_short.live is None


def test_progress_is_called_every_so_many_states_and_at_the_end(monkeypatch):
    monkeypatch.setattr(verifier, "PROGRESS_EVERY", 1000)
    calls = []
    verify(WIDE, max_states=2500, progress=lambda explored, waiting: calls.append((explored, waiting)))
    assert [explored for explored, _ in calls] == [1000, 2000, 2500] and all(waiting > 0 for _, waiting in calls)
    calls.clear()
    verify(PURCHASE, progress=lambda explored, waiting: calls.append((explored, waiting)))
    assert calls == [(31, 0)]


def test_progress_true_updates_one_line_on_stderr(monkeypatch, capsys):
    monkeypatch.setattr(verifier, "PROGRESS_EVERY", 1000)
    verify(WIDE, max_states=2500, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and err.endswith("\n") and err.count("\n") == 1
    assert [line.split(" states")[0] for line in err.split("\r")[1:]] == [
        "verifying Wide: 1,000",
        "verifying Wide: 2,000",
        "verifying Wide: 2,500",
    ]


@pytest.mark.parametrize("bad", [0, -1, 2.5, float("nan"), True, "1000", None])
def test_max_states_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=rf"max_states must be a positive integer .*got {bad!r}"):
        verify(WIDE, max_states=bad)


def test_progress_must_be_a_function_or_true():
    with pytest.raises(TypeError, match="progress must be None, True or a function"):
        verify(PURCHASE, progress="yes")


def test_the_report_is_the_same_whatever_the_hash_seed():
    """Breadth-first order must not follow set iteration order, which changes with PYTHONHASHSEED (with seeds 1 and
    3, FORK's trace would show the arrivals of one and two in either order)."""
    script = (
        "import sys; from coordkit.bspl.parser import parse; from coordkit.bspl.verifier import verify; "
        "print(verify(parse(sys.stdin.read()), max_states=5000))"
    )
    reports = [
        subprocess.run(
            [sys.executable, "-c", script],
            input=FORK,
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent.parent,
            env=os.environ | {"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "3")
    ]
    assert reports[0] == reports[1] == str(verify(parse(FORK), max_states=5000)) + "\n"


def test_a_long_counterexample_is_wrapped_between_events_never_inside_one():
    report = verify(load("flexible_purchase"))
    lines = str(report).splitlines()
    assert all(len(line) <= 110 for line in lines) and len(lines) > 3
    stuck = " ".join(line.strip() for line in lines[1:-1]).removeprefix("stuck after: ")
    assert stuck.split(" → ") == list(report.liveness_counterexample)


def test_a_protocols_in_parameters_come_from_outside_so_messages_that_read_them_can_go():
    """Singh 2011 (and the reference): `in` parameters of a protocol are its inputs, known to every role at the
    start; a protocol whose messages read its `in` key is live (the kit said "never bound" and not live)."""
    given_key = parse("""Given {
      roles A, B
      parameters in id key, out x
      A -> B: go[in id, out x]
    }""")
    report = verify(given_key)
    assert report.safe and report.live and report.liveness_counterexample == ()


def test_two_roles_may_each_start_an_enactment_with_an_out_key():
    """An `out` key starts a fresh enactment (semantics.py says so too): two starters are two enactments, not a
    conflict on the key (the kit called it unsafe)."""
    either = parse("""Either {
      roles A, B
      parameters out id key, out x
      A -> B: from-a[out id, out x]
      B -> A: from-b[out id, out x]
    }""")
    report = verify(either)
    assert report.safe and report.live


def test_a_protocol_that_gives_an_in_parameter_and_binds_it_out_is_refused():
    with pytest.raises(ParseError, match="'in x' comes from outside the protocol, but message 'go' binds it `out`"):
        parse("""Bad {
          roles A, B
          parameters out id key, in x
          A -> B: go[out id, out x]
        }""")


def test_messages_that_change_no_verdict_are_left_out_so_a_wide_protocol_is_decided():
    """finish-early (the reference's tests): 17 steps, each binding a private parameter nothing reads, sent to a role
    that sends nothing: 2^17 orders of them, one verdict. The reduction leaves them out and still lists them as
    unused; a message that informs a role who sends on is kept (Purchase's `ship`: 31 states, as before)."""
    steps = "\n".join(f"  A -> B step{k}[in ID, out p{k}]" for k in range(17))
    wide = parse(
        f"FinishEarly {{\n  roles A, B\n  parameters out ID key\n  private {', '.join(f'p{k}' for k in range(17))}\n"
        f"  A -> B Start[out ID]\n{steps}\n}}"
    )
    report = verify(wide)
    assert report.complete and report.safe and report.live and report.states < 10
    assert report.unused == tuple(sorted(f"p{k}" for k in range(17)))
    assert verify(PURCHASE).states == 31 and verifier._inert(PURCHASE) == set()


def test_two_roles_binding_a_parameter_in_different_key_contexts_is_no_conflict():
    """As the reference checks safety (check_all_parameter_conflicts): `contract` bound by the Borrower in round r1's
    context and by the Lender in round r2's are two enactments' bindings; in one context it is a conflict."""
    rounds = """Offers {
      roles B, L
      parameters out id key, opt contract
      private r1, r2
      B -> L: start[out id]
      B -> L: round1[in id, out r1 key]
      L -> B: round2[in id, out r2 key]
      B -> L: accept1[in id, in r1 key, out contract]
      L -> B: accept2[in id, in r2 key, out contract]
    }"""
    assert verify(parse(rounds)).safe
    one_context = rounds.replace("in r1 key, out contract", "out contract").replace(
        "in r2 key, out contract", "out contract"
    )
    assert verify(parse(one_context)).safe is False
