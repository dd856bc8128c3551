#!/usr/bin/env python
"""Benchmark of code mode: what validation adds to a call, and how long declarations take to render.

Run from the repository root::

    python bench/codemode.py           # a few seconds
    python bench/codemode.py --quick   # fewer repetitions (a smoke run)

Prints a markdown table of medians beside floors measured in the same run, and
writes it to ``bench/results/codemode.md`` (``--out`` elsewhere). Nothing here
asserts a timing. The rows:

* ``validate + bind + dump, small model``: what ``call_action`` adds for a
  typed action (``def send(msg: Email) -> Sent``): the catalog entry
  validates ``{to, body}`` into an ``Email``, binds it to the function's
  arguments and dumps the returned ``Sent`` to JSON values. Its floor is
  pydantic's ``TypeAdapter(Email).validate_python`` alone. Target ≤ 10 µs.
* ``live call, typed − untyped``: the same difference seen through the whole
  engine (a script awaiting N calls of a typed action, minus N calls of an
  untyped one, per call): noisier, since a live call costs hundreds of µs.
* ``declarations, 100 actions``: ``declarations()`` over 100 catalog entries
  with models, enums, optionals, lists and a recursive type. Its floor is
  ``json.dumps`` of the same schemas. Target ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import enum
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # measure this checkout

from pydantic import BaseModel, TypeAdapter  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from jupyter_sandbox import Sandbox  # noqa: E402
from jupyter_sandbox.agents.catalog import spec_for  # noqa: E402
from jupyter_sandbox.agents.typescript import declarations  # noqa: E402

VALIDATE_TARGET_US = 10.0
DECLARE_TARGET_MS = 50.0


class Email(BaseModel):
    to: str
    body: str


class Sent(TypedDict):
    sent: bool
    id: str


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Address(BaseModel):
    street: str
    city: str
    zip: str | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = []


def send(msg: Email) -> Sent:
    return {"sent": True, "id": "m1"}


def median_of(fn: Callable[[], object], repeat: int) -> float:
    gc.collect()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def per_call_us(fn: Callable[[], object], calls: int, repeat: int) -> float:
    def batch() -> None:
        for _ in range(calls):
            fn()

    return median_of(batch, repeat) / calls * 1e6


def validation(repeat: int) -> tuple[float, float]:
    spec = spec_for(send, "send")
    value = {"to": "ada@example.com", "body": "hello"}
    adapter = TypeAdapter(Email)
    result = send(Email(**value))

    def hook() -> None:
        args, kwargs = spec.arguments(spec.validate(value))
        spec.dump(result)

    return per_call_us(hook, 20_000, repeat), per_call_us(lambda: adapter.validate_python(value), 20_000, repeat)


def live_difference(repeat: int, n: int) -> tuple[float, float]:
    script = "for (let i = 0; i < ctx.input; i++) await actions.%s({to: 'a', body: 'b'}); return 1"
    with Sandbox() as sb:
        sb.action(send, name="typed")
        sb.action(lambda msg: {"sent": True, "id": "m1"}, name="untyped")
        sb.eval(script % "typed", input=10)
        typed, untyped = [], []
        for _ in range(repeat):  # alternated, so a change in the machine's load hits both alike
            typed.append(median_of(lambda: sb.eval(script % "typed", input=n), 1) / n * 1e6)
            untyped.append(median_of(lambda: sb.eval(script % "untyped", input=n), 1) / n * 1e6)
    return statistics.median(t - u for t, u in zip(typed, untyped, strict=True)), statistics.median(untyped)


def hundred_specs() -> list:
    specs = []
    for i in range(100):
        kind = i % 4
        if kind == 0:

            def fn(msg: Email) -> Sent: ...
        elif kind == 1:

            def fn(where: Address, level: Level = Level.LOW, tags: tuple[str, ...] = ()) -> Address | None: ...
        elif kind == 2:

            def fn(tree: Node) -> tuple[int, str]: ...
        else:

            def fn(query: str, mode: Literal["exact", "fuzzy"] = "fuzzy", limit: int = 10) -> list[dict]: ...

        fn.__doc__ = f"Action number {i}.\n\nArgs:\n    query: what to look for"
        specs.append(spec_for(fn, f"action_{i}"))
    return specs


def declare(repeat: int) -> tuple[float, float, int]:
    specs = hundred_specs()
    schemas = [(s.input_schema, s.output_schema) for s in specs]
    text = declarations(specs)
    took = median_of(lambda: declarations(specs), repeat) * 1e3
    floor = median_of(lambda: json.dumps(schemas), repeat) * 1e3
    return took, floor, len(text)


def main(argv: list[str]) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "codemode.md")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 9
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    hook, floor = validation(repeat)
    live, untyped = live_difference(3 if args.quick else 5, 200 if args.quick else 1000)
    took, dumps, size = declare(repeat)
    rows = [
        (
            "validate + bind + dump, small model",
            f"{hook:.2f} µs",
            f"{floor:.2f} µs (pydantic validate_python)",
            f"≤ {VALIDATE_TARGET_US:g} µs",
            "yes" if hook <= VALIDATE_TARGET_US else "no",
        ),
        ("live call, typed − untyped", f"{live:.1f} µs", f"{untyped:.1f} µs (an untyped live call)", "", ""),
        (
            "declarations, 100 actions",
            f"{took:.2f} ms ({size:,} chars)",
            f"{dumps:.2f} ms (json.dumps)",
            f"≤ {DECLARE_TARGET_MS:g} ms",
            "yes" if took <= DECLARE_TARGET_MS else "no",
        ),
    ]
    lines = [
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f}",
        "",
        "| case | median | floor | target | meets target |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])
