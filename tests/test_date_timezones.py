"""Every Date parse and format gives the same result in any host timezone.

The realm's Date (js/date.js, js/dateparse.js) treats local time as UTC and parses with its own
port of quickjs-ng's parser. Here it runs in worker processes under several
``TZ`` values, where the engine's own Date follows the host, and generated
strings and time values must give identical results in every one of them;
the UTC worker also answers for the engine's own parser, the oracle the port
must equal (in UTC, quickjs-ng's "local" is UTC).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

JS_DIR = Path(__file__).resolve().parent.parent / "jupyter_sandbox" / "engine" / "js"
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham"]
NOW = 1700000000123

# A worker: the fragment as the realm loads it, then one JSON request per line:
# ["parse", strings] or ["format", time values] or ["build", component lists].
WORKER = r"""
import json, sys, quickjs
context = quickjs.Context()
context.eval("var hostParse = Date.parse, hostHours = new Date(0).getHours();"
             "var D = (function () {" + sys.argv[1] + "; return makeRecordedDate(Date, () => NOW) })();")
ask = context.eval('''(function (kind, text) {
  const values = JSON.parse(text);
  const formats = (d) => [d.getTime(), d.toString(), d.toDateString(), d.toTimeString(), d.toLocaleString(),
    d.toLocaleDateString(), d.toLocaleTimeString(), d.toUTCString(), d.getTimezoneOffset(), d.getFullYear(),
    d.getMonth(), d.getDate(), d.getDay(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getYear(),
    isNaN(d) ? null : d.toISOString(), JSON.stringify(d)];
  const out = values.map((v) => kind === "parse" ? [D.parse(v), hostParse(v), formats(new D(v))]
    : kind === "format" ? formats(new D(v)) : formats(new D(...v)));
  return JSON.stringify({hostHours, out});
})''')
for line in sys.stdin:
    kind, values = json.loads(line)
    print(ask(kind, json.dumps(values)), flush=True)
""".replace("NOW", str(NOW))


class Worker:
    def __init__(self, zone: str):
        fragment = "\n".join((JS_DIR / name).read_text(encoding="utf-8") for name in ("dateparse.js", "date.js"))
        self.zone = zone
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, fragment],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "TZ": zone},
        )

    def ask(self, kind: str, values: list) -> dict:
        self.process.stdin.write(json.dumps([kind, values]) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the worker in {self.zone} died"
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def workers():
    started = {zone: Worker(zone) for zone in ZONES}
    yield started
    for worker in started.values():
        worker.close()


def in_every_zone(workers, kind: str, values: list) -> dict:
    return {zone: worker.ask(kind, values)["out"] for zone, worker in workers.items()}


def assert_same_everywhere(answers: dict, values: list) -> None:
    reference = answers["UTC"]
    for zone, answer in answers.items():
        for value, mine, utc in zip(values, answer, reference, strict=True):
            assert mine == utc, f"{value!r} in {zone}: {mine} != {utc} (UTC)"


# --- generated date strings ------------------------------------------------------------------------

MONTHS = [
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
    "January",
    "february",
    "MARCH",
    "Sept",
]
ZONE_NAMES = [
    "GMT",
    "UTC",
    "UT",
    "Z",
    "EST",
    "EDT",
    "CST",
    "CDT",
    "MST",
    "MDT",
    "PST",
    "PDT",
    "WET",
    "WEST",
    "CET",
    "CEST",
    "EET",
    "EEST",
    "IST",
    "JST",
    "NZDT",
]
number = st.integers(0, 999_999).map(str) | st.integers(0, 99).map(lambda n: f"{n:02d}")
time = st.builds(
    lambda h, m, s, ms: (
        f"{h}:{m:02d}" + (f":{s:02d}" if s is not None else "") + (f".{ms}" if ms is not None and s is not None else "")
    ),
    st.integers(0, 25),
    st.integers(0, 61),
    st.none() | st.integers(0, 61),
    st.none() | st.integers(0, 99999),
)
offset = st.builds(
    lambda sign, h, m, colon: f"{sign}{h:02d}{':' if colon else ''}{m:02d}",
    st.sampled_from("+-"),
    st.integers(0, 25),
    st.integers(0, 61),
    st.booleans(),
)
token = st.one_of(
    number,
    time,
    offset,
    st.sampled_from(MONTHS),
    st.sampled_from(["Mon", "Tue", "Thursday", "Sat,"]),
    st.sampled_from(ZONE_NAMES),
    st.sampled_from(["AM", "PM", "am", "pm"]),
    st.sampled_from(ZONE_NAMES).map(lambda z: f"({z})"),
    st.sampled_from(["(", ")", "(a (b) c)", "x", "T"]),
    st.builds(lambda s, d: f"{s}{d}", st.sampled_from("+-"), st.integers(0, 300_000)),
)
separator = st.sampled_from([" ", " ", "  ", "-", "/", ",", ", ", ".", "T", ""])
other_string = st.lists(st.tuples(token, separator), min_size=1, max_size=8).map(
    lambda parts: "".join(t + s for t, s in parts).strip()
)

year = st.one_of(
    st.integers(1000, 9999).map(lambda y: f"{y:04d}"),
    st.integers(0, 99).map(lambda y: f"{y:04d}"),
    st.sampled_from([275760, -271821, 275759, -271820, 0, 10000, -1]).map(lambda y: f"{y:+07d}"),
    st.integers(-300_000, 300_000).map(lambda y: f"{y:+07d}"),
)
iso_string = st.builds(
    lambda y, mo, d, t, z: (
        y + (f"-{mo:02d}" + (f"-{d:02d}" if d is not None else "") if mo is not None else "") + (t or "") + (z or "")
    ),
    year,
    st.none() | st.integers(0, 13),
    st.none() | st.integers(0, 32),
    st.none()
    | st.builds(
        lambda h, m, s: f"T{h:02d}:{m:02d}" + (f":{s}" if s else ""),
        st.integers(0, 25),
        st.integers(0, 60),
        st.none() | st.sampled_from(["00", "59", "30.5", "07.123456", "60"]),
    ),
    st.none() | st.sampled_from(["Z", "+00:00", "-05:00", "+0530", "+13:45", "-1200", "+24:00", "z"]),
)
# Local ISO strings at both ends of the valid range, where a host offset tips them in or out of it.
range_end = st.sampled_from(
    [
        "+275760-09-13T00:00",
        "+275760-09-12T23:59:59",
        "+275760-09-13T00:00:00.001",
        "-271821-04-20T00:00",
        "-271821-04-19T23:59",
        "-271821-04-20T00:00:00",
        "+275760-09-13",
        "-271821-04-19T23:00:00",
        "+275760-09-13T00:00-00:01",
    ]
)
free_text = st.text(st.sampled_from("0123456789 :-+/.,()TZGMUESCPDAMJanFebOct\u2212\u00e9\x00"), max_size=40)
date_string = st.one_of(other_string, iso_string, range_end, free_text)


@given(st.lists(date_string, min_size=1, max_size=25))
def test_parsing_gives_the_same_result_in_every_host_timezone(workers, strings):
    answers = in_every_zone(workers, "parse", strings)
    # [1] is the engine's own parser, which follows the host: compare ours and its formats.
    assert_same_everywhere(
        {zone: [(mine, formats) for mine, _, formats in answer] for zone, answer in answers.items()}, strings
    )


@given(st.lists(date_string, min_size=1, max_size=25))
def test_parsing_equals_the_engines_own_parser_in_utc(workers, strings):
    for text, (mine, engine_in_utc, _) in zip(strings, workers["UTC"].ask("parse", strings)["out"], strict=True):
        assert mine == engine_in_utc, f"Date.parse({text!r}) = {mine}, quickjs-ng in UTC says {engine_in_utc}"


LIMIT = 8_640_000_000_000_000
time_value = st.one_of(
    st.integers(-LIMIT - 10**8, LIMIT + 10**8),
    st.integers(-(10**13), 10**13),
    st.sampled_from([0, -1, LIMIT, -LIMIT, LIMIT + 1, 1616900000000]),
)


@given(st.lists(time_value, min_size=1, max_size=25))
def test_formatting_gives_the_same_result_in_every_host_timezone(workers, values):
    assert_same_everywhere(in_every_zone(workers, "format", values), values)


components = st.lists(st.integers(-400_000, 400_000) | st.integers(-100, 100), min_size=2, max_size=7)


@given(st.lists(components, min_size=1, max_size=25))
def test_component_construction_gives_the_same_result_in_every_host_timezone(workers, lists):
    assert_same_everywhere(in_every_zone(workers, "build", lists), lists)


def test_the_workers_really_run_in_different_zones(workers):
    # The intrinsic's hour at the epoch, read before it was neutralised: the host zone took effect.
    hours = {zone: worker.ask("format", [0])["hostHours"] for zone, worker in workers.items()}
    assert hours == {"UTC": 0, "America/New_York": 19, "Asia/Kolkata": 5, "Pacific/Chatham": 12}


# --- the strings the review found ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "10:00 2020-01-01",  # a time before the date
        "10:00 Jan 1 2020",
        "Jan 1 2020 10:00 (EST)",  # a zone name inside a comment is no zone
        "(UTC) Jan 1 2020 10:00",
        "Jan 1 2020 10:00 (Coordinated Universal Time) EST",
        "+275760-09-13T00:00:00",  # local ISO strings at the ends of the valid range
        "-271821-04-20T00:00:00",
        "+275760-09-12T23:00",
        "2020-01-01T10:00",
        "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)",
    ],
)
def test_strings_the_review_found_parse_the_same_everywhere_and_as_utc(workers, text):
    answers = in_every_zone(workers, "parse", [text])
    assert_same_everywhere(
        {zone: [(mine, formats) for mine, _, formats in answer] for zone, answer in answers.items()}, [text]
    )
    mine, engine_in_utc, _ = answers["UTC"][0]
    assert mine == engine_in_utc


# --- the real realm, end to end ---------------------------------------------------------------------

SCRIPT = r"""
function NT() {} NT.prototype = 0;
const fallback = Reflect.construct(Date, [0], NT);
const Intrinsic = Object.getPrototypeOf(fallback).constructor;
return {
  parsed: ["10:00 Jan 1 2020", "Jan 1 2020 10:00 (EST)", "+275760-09-13T00:00:00", "2021-03-14T02:30"].map(Date.parse),
  hours: new Date(0).getHours(), local: new Date(2021, 2, 14, 2, 30).toString(),
  fallbackHours: fallback.getHours(), fallbackString: fallback.toString(), sameDate: Intrinsic === Date,
  offset: fallback.getTimezoneOffset(), locale: new Date(1e12).toLocaleString(),
};
"""
RUN = "import json, sys\nfrom jupyter_sandbox import Sandbox\nprint(json.dumps(Sandbox().eval(sys.argv[1]).output))"


def test_a_script_sees_the_same_dates_in_every_host_timezone():
    outputs = {}
    for zone in ZONES:
        done = subprocess.run(
            [sys.executable, "-c", RUN, SCRIPT],
            env={**os.environ, "TZ": zone},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        outputs[zone] = json.loads(done.stdout)
    assert all(output == outputs["UTC"] for output in outputs.values()), outputs
    assert outputs["UTC"]["fallbackHours"] == 0 and outputs["UTC"]["sameDate"] is True
