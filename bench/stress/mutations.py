"""Bad things built from a case's plain data: a bad source, a mutated call log, a corrupted store file."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from bench.stress.cases import py_value


def bad_source(kind: str) -> Any:
    return {
        "bytes": b"return 1",
        "none": None,
        "int": 42,
        "nul": "return 'a\x00b'",
        "surrogate": "return '\ud800'",
        "over-256k": "//" + "x" * (256 * 1024),
        "exactly-256k": "return 1;" + " " * (256 * 1024 - 9),
        "bom": "\ufeffreturn 1",
        "crlf": "const a = 1;\r\nreturn a;\r\n",
        "comments-only": "// nothing\n/* here */",
        "empty": "",
        "u2028": "const a = 1;\u2028return a;",
        "bytes-like-list": ["return 1"],
        "only-newlines": "\n" * 10000,
        "deep-parens": "return " + "(" * 50000 + "1" + ")" * 50000,
        "many-lines": "let x = 0;\n" * 20000 + "return x;",
    }[kind]


def mutate_call_log(log: list, mutations: list) -> Any:
    out: Any = log
    for m in mutations:
        if m[0] == "whole":
            out = {
                "int": 7,
                "str": "call log",
                "dict": {"0": log[0]},
                "set": {1},
                "bytes": b"[]",
                "tuple": tuple(log),
                "none-list": [None] * 6,
                "nested-list": [log],
                "empty": [],
            }[m[1]]
        elif not isinstance(out, list):
            continue
        elif m[0] == "entry":
            if m[1] < len(out):
                out[m[1]] = {
                    "int": 1,
                    "str": "entry",
                    "list": [1],
                    "true": True,
                    "empty-dict": {},
                    "type-none": {"type": None, "response": 1},
                    "type-int": {"type": 5, "response": 1},
                    "type-bogus": {"type": "bogus", "response": 1},
                    "type-list": {"type": [], "response": 1},
                    "type-dict": {"type": {}, "response": 1},
                    "none": None,
                }[m[2]]
        elif m[0] == "field":
            _, index, field, value = m
            if index < len(out) and isinstance(out[index], dict):
                entry = dict(out[index])
                if value == "drop":
                    entry.pop(field, None)
                else:
                    entry[field] = _field_value(value)
                out[index] = entry
        elif m[0] == "length":
            kind = m[1]
            if kind == "truncate":
                out = out[: len(out) // 2]
            elif kind == "extend-none":
                out = out + [None] * 3
            elif kind == "extend-dup":
                out = out + out
            elif kind == "prepend-none":
                out = [None] + out
            elif kind == "shuffle":
                out = list(reversed(out[1:])) + out[:1]
            elif kind == "repeat":
                out = out * 100
            elif kind == "reverse":
                out = list(reversed(out))
            elif kind == "drop-first":
                out = out[1:]
    return out


def _field_value(kind: str) -> Any:
    simple = {
        "int": 5,
        "none": None,
        "list": [1, 2],
        "dict": {"a": 1},
        "str": "text",
        "neg": -1,
        "true": True,
        "empty-str": "",
        "huge": "z" * 2_000_000,
    }
    if kind in simple:
        return simple[kind]
    return py_value(kind)


def corrupt_store_file(path: Path, case: dict[str, Any]) -> None:
    kind, frac, count = case["corruption"], case["offset"], case["count"]
    rng = random.Random(case["i"])
    if kind in ("blob-runs", "blob-journal", "blob-options", "drop-table", "schema"):
        db = sqlite3.connect(path)
        junk = rng.choice([b"\xff\x00\xff", b"\xa0", b"\x01", b"", b"\x9f", rng.randbytes(count)])
        if kind == "blob-runs":
            db.execute("UPDATE runs SET " + rng.choice(["output", "input", "error"]) + " = ?", (junk,))
        elif kind == "blob-options":
            db.execute("UPDATE runs SET options = ?", (junk,))
        elif kind == "blob-journal":
            db.execute("UPDATE run_journal SET body = ? WHERE seq = ?", (junk, rng.randrange(6)))
        elif kind == "drop-table":
            db.execute("DROP TABLE " + rng.choice(["run_journal", "run_attempts", "signals", "meta"]))
        else:
            db.execute("UPDATE meta SET value = ?", (rng.choice(["abc", "-1", "99", ""]),))
        db.commit()
        db.close()
        return
    wal = Path(str(path) + "-wal")
    if kind == "delete-wal":
        wal.unlink(missing_ok=True)
        return
    if kind == "wal-garbage":
        wal.write_bytes(rng.randbytes(4096))
        return
    if kind == "empty-file":
        path.write_bytes(b"")
        return
    data = bytearray(path.read_bytes())
    if kind == "truncate":
        data = data[: int(len(data) * frac)]
    elif kind == "flip":
        for _ in range(count):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "zero-page":
        page = 4096
        start = rng.randrange(max(len(data) // page, 1)) * page
        data[start : start + page] = bytes(min(page, len(data) - start))
    elif kind == "garbage-header":
        data[:100] = rng.randbytes(100)
    path.write_bytes(bytes(data))
