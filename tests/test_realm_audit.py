"""The reachability audit: nothing a script can reach reads the host.

``tests/js/realm_audit.js`` walks the realm's object graph. It runs twice in
the same QuickJS context: once before the prelude, to catalogue the pristine
realm (every intrinsic, and which of them read the host clock, randomness or
timezone), and once as the workflow script itself, to walk everything the
script can reach (from its global object and from values it can build with
syntax alone) and report any host reader or host function among them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import quickjs

from jupyter_sandbox import Sandbox
from jupyter_sandbox.engine import realm

AUDIT = (Path(__file__).parent / "js" / "realm_audit.js").read_text(encoding="utf-8")
# Phase 1, evaluated before the prelude: the pristine catalogue, parked on the global.
CAPTURE = "globalThis.__audit_pristine = (function () {\n" + AUDIT + "\nreturn catalogue(globalThis);\n})();\n"
# Phase 2, the workflow script: take the catalogue off the global, then walk.
SCRIPT = (
    "const G = Function('return this')();\nconst pristine = G.__audit_pristine;\n"
    "delete G.__audit_pristine;\n" + AUDIT + "\nreturn audit(G, pristine);\n"
)


def audit_report(*, strict: bool = False) -> dict:
    """The audit's report from a real run of the real realm (prelude and all)."""
    saved = realm._PRELUDE
    realm._PRELUDE = CAPTURE + realm._prelude_source()
    sb = Sandbox()
    try:
        return sb.eval(SCRIPT, strict=strict).output
    finally:
        realm._PRELUDE = saved
        sb.close()


@pytest.fixture(scope="module")
def report() -> dict:
    return audit_report()


def test_the_audit_walks_the_whole_realm(report):
    # A walk that stopped early would pass vacuously: it must see the realm's
    # hundreds of intrinsics, natives among them, and know what reads the host.
    assert report["objects"] > 500
    assert report["natives"] > 300
    assert report["readers"] > 20


def test_no_intrinsic_that_reads_the_host_is_reachable(report):
    assert report["forbidden"] == []


def test_no_host_function_is_reachable(report):
    assert report["host"] == []


def test_no_intrinsic_that_reads_the_host_is_reachable_in_strict_mode():
    strict = audit_report(strict=True)
    assert (strict["forbidden"], strict["host"]) == ([], [])


# --- the audit itself: it finds what it must find -----------------------------------------------


def audit_plain_context(setup: str, host_function: bool = False) -> dict:
    """The audit in a bare context where ``setup`` (run after the catalogue) plays the prelude."""
    context = quickjs.Context()
    context.eval(CAPTURE)
    if host_function:
        context.add_callable("hostFunction", lambda: None)
    context.eval(setup)
    return json.loads(context.eval("JSON.stringify((function () {" + SCRIPT + "})())"))


def paths(found: list[dict]) -> set[str]:
    return {item["path"] for item in found}


def test_audit_finds_the_intrinsic_date_behind_a_wrapper_through_the_construct_protocol():
    # The wrapper passes new.target on, as the engine's first Date did: with a
    # newTarget whose prototype is not an object, the instance gets the intrinsic
    # Date.prototype, and from there its constructor.
    wrapper = (
        "const Orig = Date;"
        "globalThis.Date = function Date(...a) { return Reflect.construct(Orig, a, new.target) };"
        "Date.prototype = Object.create(Object.prototype);"
    )
    found = audit_plain_context(wrapper)["forbidden"]
    assert "Reflect.construct(globalThis.Date, [], Fallback).[[Prototype]].getHours" in paths(found)
    assert "Reflect.construct(globalThis.Date, [], Fallback).[[Prototype]].constructor" in paths(found)


def test_audit_finds_math_random_and_clock_readers_left_on_the_global():
    found = paths(audit_plain_context("")["forbidden"])
    assert {"globalThis.Date", "globalThis.Date.now", "globalThis.Math.random", "globalThis.performance"} <= found


def test_audit_finds_a_host_function():
    assert "globalThis.hostFunction" in audit_plain_context("", host_function=True)["host"]


def test_audit_finds_a_bound_function_whose_target_it_cannot_see():
    # A bound function hides its target, so any native function the pristine realm lacked is reported.
    assert "globalThis.leak" in audit_plain_context("globalThis.leak = Date.now.bind(Date);")["host"]


# --- the review's route, end to end -------------------------------------------------------------

ROUTE = (
    "function NT() {}\nNT.prototype = 0;\n"
    "const Found = Object.getPrototypeOf(Reflect.construct(Date, [0], NT)).constructor;\n"
)


def test_the_construct_protocol_route_reads_the_journaled_clock():
    sb = Sandbox()
    result = sb.eval(ROUTE + "return [Found === Date, Found.now(), new Found().getTime(), typeof Found()]")
    entries = [e for e in sb.run(result.run_id).entries if e["kind"] == "now"]
    same, now, constructed, called = result.output
    assert (same, called, len(entries)) == (True, "string", 3)
    assert [now, constructed] == [e["value"] for e in entries[:2]]


def test_the_construct_protocol_route_is_refused_in_strict_mode():
    sb = Sandbox()
    result = sb.eval(
        ROUTE + "const out = [];\n"
        "for (const read of [() => Found.now(), () => new Found(), () => Found()]) {\n"
        "  try { read(); out.push('read the clock') } catch (e) { out.push(e.message) }\n}\nreturn out",
        strict=True,
    )
    assert result.output == ["Date is not available in strict mode; use await ctx.now()"] * 3
