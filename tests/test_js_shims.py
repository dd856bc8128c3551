"""The realm's JavaScript shims: js/date.js and js/dateparse.js (a deterministic, UTC-only Date) and
js/textcodec.js (hand-rolled UTF-8 TextEncoder/TextDecoder).

Each test evaluates the fragments the way the realm does, inside one function
scope, and brings a JSON value back to Python.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import quickjs

JS_DIR = Path(__file__).resolve().parent.parent / "jupyter_sandbox" / "engine" / "js"
FRAGMENTS = "\n".join((JS_DIR / name).read_text() for name in ("dateparse.js", "date.js", "textcodec.js"))

NOW = 1700000000123  # 2023-11-14T22:13:20.123Z, a Tuesday
# Each call neutralises the one intrinsic Date.prototype in place (its constructor is the last
# Date made), so D is made last; HOST_HOURS is read from the intrinsic before either.
PRELUDE = (
    f"const HOST_HOURS = new Date(0).getHours();"
    f"const S = makeStrictDate(Date); const D = makeRecordedDate(Date, () => {NOW});"
)


def js(expression: str, setup: str = ""):
    """The JSON value of `expression`, evaluated after the fragments and `setup`."""
    code = f"(function(){{\n{FRAGMENTS}\n{PRELUDE}\n{setup}\n; return JSON.stringify({expression}) }})()"
    result = quickjs.Context().eval(code)
    assert isinstance(result, str), f"{expression} is not JSON-serialisable: {result!r}"
    return json.loads(result)


def thrown(statement: str) -> list:
    """[name, message] of what `statement` throws (fails the test if nothing is thrown)."""
    result = js("caught", f"let caught = null; try {{ {statement} }} catch (e) {{ caught = [e.name, e.message] }}")
    assert result is not None, f"{statement} did not throw"
    return result


def code_points(expression: str) -> list[int]:
    """The code points of the JS string `expression` (lone surrogates cannot cross to Python)."""
    return js(f"Array.from({expression}, (c) => c.codePointAt(0))")


# --- Date: the clock ---------------------------------------------------------


def test_reading_the_clock_calls_read_now_once_per_read():
    setup = "let reads = 0; const C = makeRecordedDate(Date, () => 1000 * ++reads);"
    assert js("[C.now(), new C().getTime(), C(), new C(5).getTime(), Date.UTC(2020, 0), reads]", setup) == [
        1000,
        2000,
        "Thu Jan 01 1970 00:00:03 GMT+0000 (Coordinated Universal Time)",
        5,
        1577836800000,
        3,
    ]


def test_date_called_without_new_is_the_recorded_now_as_a_string():
    assert js("D(2020, 1, 1)") == "Tue Nov 14 2023 22:13:20 GMT+0000 (Coordinated Universal Time)"


def test_deterministic_constructors_do_not_read_the_clock():
    setup = "const C = makeRecordedDate(Date, () => { throw new Error('clock read') });"
    assert js(
        "[new C(0).getTime(), new C(2020, 0, 1).getTime(), new C('2020-01-01').getTime(), C.UTC(2020, 0)]", setup
    ) == [
        0,
        1577836800000,
        1577836800000,
        1577836800000,
    ]


def test_strict_date_refuses_to_read_the_clock_with_a_hint():
    message = "Date is not available in strict mode; use await ctx.now()"
    for statement in ("new S()", "S()", "S.now()"):
        assert thrown(statement) == ["Error", message]


def test_strict_date_keeps_deterministic_uses_in_utc():
    assert js(
        "[new S(0).getTime(), new S(2020, 0, 1, 5).getHours(), S.UTC(2020, 0, 1), S.parse('2020-01-01T00:00')]"
    ) == [
        0,
        5,
        1577836800000,
        1577836800000,
    ]


# --- Date: local time is UTC -------------------------------------------------


def test_local_getters_equal_the_utc_getters():
    units = ["FullYear", "Month", "Date", "Day", "Hours", "Minutes", "Seconds", "Milliseconds"]
    local = js(f"{units}.map((u) => new D({NOW})['get' + u]())")
    utc = js(f"{units}.map((u) => new D({NOW})['getUTC' + u]())")
    assert local == utc == [2023, 10, 14, 2, 22, 13, 20, 123]


def test_timezone_offset_is_zero():
    assert js("[new D(0).getTimezoneOffset(), new D(2021, 6, 1).getTimezoneOffset()]") == [0, 0]


def test_local_setters_behave_as_utc_setters():
    setup = "const d = new D(0); d.setHours(25, 30); d.setDate(15); d.setMonth(5); d.setFullYear(2001);"
    assert js("d.toISOString()", setup) == "2001-06-15T01:30:00.000Z"


def test_component_constructor_is_utc():
    assert js("new D(2021, 6, 4, 12, 30, 15, 250).toISOString()") == "2021-07-04T12:30:15.250Z"


def test_string_without_offset_is_parsed_as_utc():
    cases = {
        "2020-01-01T00:00": 1577836800000,
        "2020-01-01T10:00:00.5": 1577872800500,
        "2020-01-01": 1577836800000,
        "2020/01/01": 1577836800000,
        "Jan 1 2020 10:00": 1577872800000,
    }
    assert js(f"{list(cases)}.map((s) => [D.parse(s), new D(s).getTime()])") == [[v, v] for v in cases.values()]


def test_string_with_explicit_offset_keeps_it():
    cases = {
        "2020-01-01T00:00:00+01:00": 1577833200000,
        "2020-01-01T10:00Z": 1577872800000,
        "Tue, 01 Jan 2020 10:00:00 GMT": 1577872800000,
        "Jan 1 2020 10:00 EST": 1577890800000,
        "Jan 1 2020 10:00:00 -0100": 1577876400000,
    }
    assert js(f"{list(cases)}.map((s) => D.parse(s))") == list(cases.values())


def test_to_string_renders_utc():
    assert js("[new D(0).toString(), new D(0).toDateString(), new D(0).toTimeString(), String(new D(0))]") == [
        "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)",
        "Thu Jan 01 1970",
        "00:00:00 GMT+0000 (Coordinated Universal Time)",
        "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)",
    ]


def test_locale_strings_are_a_fixed_utc_rendering():
    d = f"new D({NOW})"
    assert js(
        f"[{d}.toLocaleString(), {d}.toLocaleDateString('de-DE'), {d}.toLocaleTimeString(),"
        " new D(0).toLocaleTimeString()]"
    ) == [
        "11/14/2023, 10:13:20 PM",
        "11/14/2023",
        "10:13:20 PM",
        "12:00:00 AM",
    ]


def test_to_string_round_trips_through_parse():
    assert js(f"D.parse(new D({NOW - 123}).toString())") == NOW - 123


def test_invalid_date_renders_as_invalid():
    assert js("[new D('nope').toString(), new D(NaN).toLocaleString(), new D('nope').getTimezoneOffset()]") == [
        "Invalid Date",
        "Invalid Date",
        None,  # NaN
    ]


def test_dates_are_real_dates():
    assert js(
        "[new D() instanceof D, Object.prototype.toString.call(new D()), new D(0).constructor === D,"
        " D.prototype.constructor === D, JSON.stringify({at: new D(5)}), new D(7) - 2, new D(new D(9)).getTime(),"
        " D.name, D.length]"
    ) == [True, "[object Date]", True, True, '{"at":"1970-01-01T00:00:00.005Z"}', 5, 9, "Date", 7]


def test_subclassing_works():
    assert js("[new M(0) instanceof M, new M(0) instanceof D, new M(2020, 0).getTime()]", "class M extends D {}") == [
        True,
        True,
        1577836800000,
    ]


def test_annex_b_year_methods_are_utc():
    assert js("[new D(0).getYear(), d.setYear(99), d.toISOString()]", "const d = new D(0);") == [
        70,
        915148800000,
        "1999-01-01T00:00:00.000Z",
    ]


def test_methods_check_their_receiver():
    assert thrown("D.prototype.getHours.call({})")[0] == "TypeError"
    assert thrown("D.prototype.toString.call({})")[0] == "TypeError"


def test_the_intrinsic_date_is_neutralised_in_place():
    # A script can always reach the intrinsic Date.prototype (the construct protocol
    # falls back to it), so that object itself must be harmless: UTC methods, our
    # constructor, and the intrinsic constructor's statics replaced as well.
    setup = "const Intrinsic = Date, proto = Date.prototype; const C = makeRecordedDate(Date, () => 42);"
    assert js(
        "[C.prototype === proto, proto.constructor === C, proto.getHours === proto.getUTCHours,"
        " proto.setMonth === proto.setUTCMonth, Intrinsic.now(), Intrinsic.parse === C.parse,"
        " Intrinsic.parse('2020-01-01T00:00'), proto.toString.call(new Intrinsic(0))]",
        setup,
    ) == [
        True,
        True,
        True,
        True,
        42,
        True,
        1577836800000,
        "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)",
    ]


def test_the_construct_protocol_fallback_yields_the_neutralised_prototype():
    setup = "function NT() {} NT.prototype = 0; const d = Reflect.construct(D, [0], NT);"
    assert js(
        "[Object.getPrototypeOf(d) === D.prototype, d.constructor === D, d.getHours(), d.constructor.now()]", setup
    ) == [True, True, 0, NOW]


# --- Date: the host's timezone does not leak ---------------------------------

# Expression → its value in UTC. Dates in winter and summer, and a local time
# that does not exist in New York (the spring-forward gap), catch DST leaks.
BATTERY = {
    "new D(0).getHours()": 0,
    "new D(0).getDate()": 1,
    "new D(0).getDay()": 4,
    f"new D({NOW}).getDay()": 2,
    "new D(0).getTimezoneOffset()": 0,
    "new D(0).toString()": "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)",
    "new D(0).toLocaleString()": "1/1/1970, 12:00:00 AM",
    "new D().toTimeString()": "22:13:20 GMT+0000 (Coordinated Universal Time)",
    "D()": "Tue Nov 14 2023 22:13:20 GMT+0000 (Coordinated Universal Time)",
    "new D(2020, 0, 1).getTime()": 1577836800000,
    "new D(2021, 6, 4, 12).getHours()": 12,
    "new D('2021-03-14T02:30').toISOString()": "2021-03-14T02:30:00.000Z",
    "new D('Mar 14 2021 02:30').toISOString()": "2021-03-14T02:30:00.000Z",
    "D.parse('2021-07-04T12:00:00')": 1625400000000,
    "D.parse('2020-01-01T00:00:00+01:00')": 1577833200000,
    "((d) => (d.setHours(30), d.toISOString()))(new D(2021, 6, 4))": "2021-07-05T06:00:00.000Z",
    "((d) => (d.setMinutes(-1), d.getDate()))(new D(0))": 31,
}
HOST_DEPENDENT = "HOST_HOURS"  # the intrinsic Date before it was neutralised, to prove TZ took effect

RUN_BATTERY = """
import json, sys, quickjs
fragments, prelude, expressions = json.load(sys.stdin)
body = ", ".join(f"[{e}]" for e in expressions)
code = "(function(){" + fragments + prelude + "; return JSON.stringify([" + body + "]) })()"
print(quickjs.Context().eval(code))
"""


def run_battery(timezone: str) -> dict:
    expressions = [*BATTERY, HOST_DEPENDENT]
    completed = subprocess.run(
        [sys.executable, "-c", RUN_BATTERY],
        input=json.dumps([FRAGMENTS, PRELUDE, expressions]),
        env={**os.environ, "TZ": timezone},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    values = [value for [value] in json.loads(completed.stdout)]
    return dict(zip(expressions, values, strict=False))


def test_results_are_the_same_in_every_host_timezone_and_equal_utc():
    new_york, tokyo = run_battery("America/New_York"), run_battery("Asia/Tokyo")
    # The engine's own Date follows TZ, so the subprocesses really ran in two zones.
    assert (new_york.pop(HOST_DEPENDENT), tokyo.pop(HOST_DEPENDENT)) == (19, 9)
    assert new_york == tokyo == BATTERY


def test_battery_holds_in_this_process():
    assert js("[" + ", ".join(BATTERY) + "]") == list(BATTERY.values())


# --- TextEncoder -------------------------------------------------------------


def test_encoder_reports_utf8():
    assert js("new TextEncoder().encoding") == "utf-8"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hi", [0x68, 0x69]),
        ("é", [0xC3, 0xA9]),
        ("€", [0xE2, 0x82, 0xAC]),
        ("😀", [0xF0, 0x9F, 0x98, 0x80]),
        ("", []),
    ],
    ids=["ascii", "two-byte", "three-byte", "four-byte-emoji", "empty"],
)
def test_encode_writes_utf8(text, expected):
    assert js(f"Array.from(new TextEncoder().encode({json.dumps(text)}))") == expected


def test_encode_returns_a_uint8array_of_the_exact_length():
    assert js(
        "((u) => [u instanceof Uint8Array, u.length, u.buffer.byteLength])(new TextEncoder().encode('aé€😀'))"
    ) == [
        True,
        10,
        10,
    ]


def test_lone_surrogates_encode_as_replacement_character():
    assert js(r"Array.from(new TextEncoder().encode('\uD800x\uDC00'))") == [0xEF, 0xBF, 0xBD, 0x78, 0xEF, 0xBF, 0xBD]


def test_encoding_matches_python_for_all_planes():
    rng = random.Random(7)
    text = "".join(
        chr(rng.choice([rng.randrange(0x80), rng.randrange(0x80, 0xD800), rng.randrange(0xE000, 0x110000)]))
        for _ in range(2000)
    )
    assert bytes(js(f"Array.from(new TextEncoder().encode({json.dumps(text)}))")) == text.encode("utf-8")


def test_encode_into_stops_before_a_character_that_does_not_fit():
    setup = "const enc = new TextEncoder(); const small = new Uint8Array(4); const big = new Uint8Array(6);"
    assert js("[enc.encodeInto('a😀b', small), enc.encodeInto('a😀b', big), Array.from(big)]", setup) == [
        {"read": 1, "written": 1},
        {"read": 4, "written": 6},
        [0x61, 0xF0, 0x9F, 0x98, 0x80, 0x62],
    ]


# --- TextDecoder -------------------------------------------------------------


@pytest.mark.parametrize("text", ["plain ascii", "café", "€100", "😀 and 👩‍👩‍👧", "日本語"])
def test_decode_round_trips(text):
    assert js(f"new TextDecoder().decode(new TextEncoder().encode({json.dumps(text)}))") == text


def test_lone_surrogate_round_trips_to_replacement_character():
    assert code_points(r"new TextDecoder().decode(new TextEncoder().encode('a\uD83Db'))") == [0x61, 0xFFFD, 0x62]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([0xFF], [0xFFFD]),
        ([0xC0, 0x80], [0xFFFD, 0xFFFD]),  # an overlong NUL
        ([0xE2, 0x82, 0x41], [0xFFFD, 0x41]),  # truncated, then ASCII
        ([0xED, 0xA0, 0x80], [0xFFFD] * 3),  # an encoded surrogate
        ([0xF4, 0x90, 0x80, 0x80], [0xFFFD] * 4),  # above U+10FFFF
        ([0x41, 0xF0, 0x9F, 0x98], [0x41, 0xFFFD]),  # truncated at the end
    ],
    ids=["invalid-byte", "overlong", "truncated", "surrogate", "too-large", "truncated-at-end"],
)
def test_invalid_bytes_decode_as_replacement_characters(data, expected):
    assert code_points(f"new TextDecoder().decode(new Uint8Array({data}))") == expected


def test_decoding_matches_python_replacement_for_random_bytes():
    rng = random.Random(1)
    interesting = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    samples = [bytes(rng.choice(interesting) for _ in range(rng.randint(1, 10))) for _ in range(300)]
    decoded = js(
        f"{[list(s) for s in samples]}.map((b) => Array.from("
        "new TextDecoder('utf-8', {ignoreBOM: true}).decode(new Uint8Array(b)), (c) => c.codePointAt(0)))"
    )
    assert decoded == [[ord(c) for c in s.decode("utf-8", "replace")] for s in samples]


def test_fatal_mode_throws_a_type_error():
    assert js("new TextDecoder('utf-8', {fatal: true}).fatal") is True
    assert thrown("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0x61, 0xFF]))")[0] == "TypeError"
    assert thrown("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xE2, 0x82]))")[0] == "TypeError"


def test_fatal_mode_decodes_valid_input():
    assert js("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xC3, 0xA9]))") == "é"


def test_streaming_decode_joins_a_split_sequence():
    setup = "const dec = new TextDecoder(); const part = (b, stream) => dec.decode(new Uint8Array(b), {stream});"
    assert js("[part([0x61, 0xF0, 0x9F], true), part([0x98], true), part([0x80, 0x62], false)]", setup) == [
        "a",
        "",
        "😀b",
    ]


def test_ending_a_stream_inside_a_sequence_gives_a_replacement_character():
    setup = "const dec = new TextDecoder(); dec.decode(new Uint8Array([0xE2, 0x82]), {stream: true});"
    assert js("dec.decode()", setup) == "\ufffd"


def test_a_finished_stream_leaves_no_state_behind():
    setup = "const dec = new TextDecoder(); dec.decode(new Uint8Array([0xE2]), {stream: true}); dec.decode();"
    assert js("dec.decode(new Uint8Array([0x82, 0x41]))", setup) == "\ufffdA"


def test_leading_bom_is_skipped():
    assert js("new TextDecoder().decode(new Uint8Array([0xEF, 0xBB, 0xBF, 0x41]))") == "A"


def test_bom_is_kept_with_ignore_bom_or_when_not_leading():
    assert (
        js("new TextDecoder('utf-8', {ignoreBOM: true}).decode(new Uint8Array([0xEF, 0xBB, 0xBF, 0x41]))") == "\ufeffA"
    )
    assert js("new TextDecoder().decode(new Uint8Array([0x41, 0xEF, 0xBB, 0xBF]))") == "A\ufeff"


def test_bom_split_across_stream_chunks_is_skipped_once():
    setup = "const dec = new TextDecoder(); const part = (b, stream) => dec.decode(new Uint8Array(b), {stream});"
    assert js("[part([0xEF, 0xBB], true), part([0xBF, 0xEF, 0xBB, 0xBF], true), part([0x41], false)]", setup) == [
        "",
        "\ufeff",
        "A",
    ]


def test_decode_accepts_buffers_and_any_view():
    setup = "const bytes = new Uint8Array([0x00, 0x68, 0x69, 0x00]);"
    assert js(
        "[new TextDecoder().decode(bytes.buffer), new TextDecoder().decode(new DataView(bytes.buffer, 1, 2)),"
        " new TextDecoder().decode(bytes.subarray(1, 3)),"
        " new TextDecoder().decode(new Uint16Array(bytes.buffer, 0, 1)),"
        " new TextDecoder().decode()]",
        setup,
    ) == ["\x00hi\x00", "hi", "hi", "\x00h", ""]


def test_decode_rejects_non_buffers():
    assert thrown("new TextDecoder().decode([0x41])")[0] == "TypeError"


def test_decoder_labels():
    assert js("[new TextDecoder().encoding, new TextDecoder(' UTF8 ').encoding]") == ["utf-8", "utf-8"]
    assert thrown("new TextDecoder('latin1')")[0] == "RangeError"


def test_large_input_decodes():
    assert js("new TextDecoder().decode(new TextEncoder().encode('é'.repeat(100000))).length") == 100000


# --- the fragments themselves ------------------------------------------------


def test_fragments_put_nothing_on_the_global_object():
    names = ["makeDateParser", "makeRecordedDate", "makeStrictDate", "TextEncoder", "TextDecoder"]
    assert js(f"{names}.map((n) => typeof globalThis[n])") == ["undefined"] * 5
    assert js(f"{names}.map((n) => typeof eval(n))") == ["function"] * 5  # declared in the shared scope
