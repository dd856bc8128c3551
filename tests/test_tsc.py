"""The declarations, checked by the real TypeScript compiler (``tsc --noEmit --strict``, tests/ts).

Each sample script is wrapped as the body of an async function, as the
sandbox runs it. Well-typed scripts must compile; a misspelt action, a wrong
field type, a missing field and a name the sandbox does not have must fail
with TypeScript's own error codes. One compiler run checks every sample.
Under ``CI=true`` these tests run or fail, never skip (``.ci/run`` installs
the compiler with ``npm ci``).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Literal

import pytest
from examples import scaled
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from jupyter_sandbox import Sandbox
from jupyter_sandbox.agents.typescript import Renderer

TSC = Path(__file__).parent / "ts" / "node_modules" / ".bin" / "tsc"
CONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "lib": ["es2022"],
        "target": "es2022",
        "module": "es2022",
        "types": [],
        "noImplicitReturns": False,
    }
}


class Email(BaseModel):
    to: str = Field(description="the recipient's address")
    subject: str
    body: str
    cc: list[str] = []


class Sent(TypedDict):
    sent: bool
    id: str


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclasses.dataclass
class Ticket:
    id: int
    text: str
    priority: Priority = Priority.LOW


def make_sandbox() -> Sandbox:
    sb = Sandbox()

    @sb.action(approval=True)
    def send_email(msg: Email) -> Sent:
        """Send an email (a human approves it first)."""

    @sb.action
    def search(query: str, limit: int = 5, mode: Literal["exact", "fuzzy"] = "fuzzy") -> list[str]:
        """Search the help centre."""

    @sb.action
    def ticket(id: int) -> Ticket | None:
        """Fetch a ticket by id."""

    @sb.action
    def walk(tree: Tree) -> tuple[int, str]:
        """Count a tree's nodes."""

    @sb.action
    def legacy(x):
        """Untyped."""

    @sb.action
    def ping() -> float:
        """The time."""

    @sb.action(
        name="ratio",
        input_schema={"type": "object", "properties": {"weird-key": {"type": "number"}}, "required": ["weird-key"]},
        output_schema={"type": "number"},
    )
    def ratio_fn(payload):
        """Explicit schemas, a key that needs quoting."""

    return sb


GOOD = {
    "send_and_read": """
        const sent = await actions.send_email({to: "ada@example.com", subject: "Hi", body: "Hello"});
        if (!sent.sent) throw new Error("not sent");
        return sent.id.toUpperCase();
    """,
    "defaults_may_be_left_out": """
        const hits = await actions.search({query: "refund"});
        const exact = await actions.search({query: "refund", limit: 1, mode: "exact"});
        return [...hits, ...exact].map((h) => h.length);
    """,
    "optional_results_are_narrowed": """
        const t = await actions.ticket(3);
        if (t === null) return "none";
        return t.priority === "high" ? t.text : t.id + 1;
    """,
    "recursion_and_tuples": """
        const [count, label] = await actions.walk({name: "root", children: [{name: "leaf"}]});
        return label.repeat(count);
    """,
    "untyped_and_no_input": """
        const anything = await actions.legacy();
        const more = await actions.legacy({whatever: [1, 2]});
        const now: number = await actions.ping();
        return [anything.deep.field, more, now];
    """,
    "quoted_keys_and_explicit_schemas": """
        const r: number = await actions.ratio({"weird-key": 0.5}, {description: "half"});
        return r * 2;
    """,
    "the_ctx_api": """
        const input = ctx.input;
        const id: string = ctx.runId;
        ctx.plan(["look up", {title: "reply", done: false}]);
        const [hits, t] = await ctx.parallel([() => actions.search({query: input.q}), () => actions.ticket(1)]);
        const settled = await ctx.parallelSettled([() => actions.ping()]);
        if (settled[0].status === "fulfilled") console.log(settled[0].value.toFixed(1));
        const n = await ctx.step("count", async () => hits.length);
        const via = await ctx.call("search", {query: "x"});
        await ctx.sleep(10);
        await ctx.minutes(1);
        const event = await ctx.waitForEvent<{ok: boolean}>({type: "approved"}, {timeout: 1000});
        const now = await ctx.now();
        ctx.log("info", "done", {n});
        ctx.progress({done: 1, total: 2, message: "half"});
        const child = await ctx.delegate({script: "return 1", input: {a: 1}});
        const agent = await ctx.agent({agent: "helper", input: null});
        data.summary = {n, now};
        const bytes = new TextEncoder().encode("hé");
        const text = new TextDecoder("utf-8", {fatal: true}).decode(bytes);
        console.info(id, t, via.length, event?.ok, child, agent, text);
        return {n, now: new Date(now).toISOString(), r: Math.random()};
    """,
    "catching_action_errors": """
        try {
          await actions.send_email({to: "x", subject: "s", body: "b"});
        } catch (e) {
          if (e instanceof ActionError) {
            console.warn(e.action, e.message, (e.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("; "));
          }
        }
        return null;
    """,
    "continue_as_new": """
        if ((ctx.input?.round ?? 0) < 3) await ctx.continueAsNew({round: (ctx.input?.round ?? 0) + 1});
        return "done";
    """,
}

BAD = {
    "misspelt_action": (
        """
        await actions.send_emial({to: "a", subject: "s", body: "b"});
    """,
        {"TS2551"},
    ),  # Property 'send_emial' does not exist ... Did you mean 'send_email'?
    "unknown_action": (
        """
        await actions.launch_rockets({});
    """,
        {"TS2339"},
    ),
    "wrong_field_type": (
        """
        await actions.send_email({to: 42, subject: "s", body: "b"});
    """,
        {"TS2322"},
    ),
    "missing_field": (
        """
        await actions.send_email({to: "a", body: "b"});
    """,
        {"TS2345"},
    ),
    "misspelt_field": (
        """
        await actions.search({qurey: "refund"});
    """,
        {"TS2561"},
    ),  # Object literal may only specify known properties, but 'qurey' ... Did you mean 'query'?
    "wrong_enum_member": (
        """
        await actions.search({query: "x", mode: "regex"});
    """,
        {"TS2322"},
    ),
    "wrong_use_of_a_result": (
        """
        const sent = await actions.send_email({to: "a", subject: "s", body: "b"});
        const n: number = sent.id;
    """,
        {"TS2322"},
    ),
    "unnarrowed_optional_result": (
        """
        const t = await actions.ticket(1);
        return t.text;
    """,
        {"TS18047"},
    ),  # 't' is possibly 'null'
    "fetch_does_not_exist": (
        """
        const r = await fetch("https://example.com");
    """,
        {"TS2304"},
    ),
    "timers_do_not_exist": (
        """
        setTimeout(() => 1, 10);
    """,
        {"TS2304"},
    ),
    "misspelt_ctx_method": (
        """
        await ctx.slep(10);
    """,
        {"TS2551"},
    ),
    "ctx_call_with_a_wrong_name": (
        """
        await ctx.call("send_emial", {});
    """,
        {"TS2345"},
    ),
}


def wrap(body: str) -> str:
    return "export {};\nasync function script() {\n" + body + "\n}\n"


def compile_files(folder: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """Run tsc once over ``files`` (name → text): the error codes found in each."""
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "tsconfig.json").write_text(json.dumps({**CONFIG, "files": sorted(files)}), encoding="utf-8")
    run = subprocess.run(
        [str(TSC), "-p", str(folder / "tsconfig.json"), "--pretty", "false"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    codes: dict[str, set[str]] = {name: set() for name in files}
    for line in run.stdout.splitlines():
        found = re.match(r"^(.+?)\(\d+,\d+\): error (TS\d+):", line)
        if found:
            codes.setdefault(Path(found.group(1)).name, set()).add(found.group(2))
    if run.returncode not in (0, 1, 2) or (run.returncode and not any(codes.values())):
        raise AssertionError(f"tsc did not run: {run.returncode}\n{run.stdout}\n{run.stderr}")
    return codes


@pytest.fixture(scope="module")
def tsc():
    if not TSC.exists():
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"{TSC} is missing: .ci/run installs it with `npm ci` in tests/ts")
        pytest.skip("the TypeScript compiler is not installed: run `npm ci` in tests/ts")
    return TSC


@pytest.fixture(scope="module")
def checked(tsc, tmp_path_factory):
    sb = make_sandbox()
    files = {"world.d.ts": sb.declarations()}
    files.update({f"good_{name}.ts": wrap(body) for name, body in GOOD.items()})
    files.update({f"bad_{name}.ts": wrap(body) for name, (body, _) in BAD.items()})
    sb.close()
    return compile_files(tmp_path_factory.mktemp("tsc"), files)


def test_the_declarations_compile_on_their_own(checked):
    assert checked["world.d.ts"] == set()


@pytest.mark.parametrize("name", sorted(GOOD))
def test_a_well_typed_script_compiles(checked, name):
    assert checked[f"good_{name}.ts"] == set()


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_wrongly_typed_script_fails_with_typescripts_error(checked, name):
    assert checked[f"bad_{name}.ts"] == BAD[name][1]


def test_the_tools_description_carries_the_declarations_tsc_checked(checked):
    sb = make_sandbox()
    assert sb.declarations() in sb.tool().description
    sb.close()


from test_typescript import schemas  # noqa: E402  (the generator the renderer's own tests use)


@settings(max_examples=scaled(3), phases=(Phase.explicit, Phase.reuse, Phase.generate))  # no shrinking: a compile each
@given(st.lists(schemas, min_size=25, max_size=25))
def test_every_type_the_renderer_writes_is_valid_typescript(tsc, tmp_path_factory, batch):
    lines, aliases = [], {}
    for i, schema in enumerate(batch):
        renderer = Renderer(schema, aliases=aliases, prefix=f"S{i}_")
        lines.append(f"declare const value{i}: {renderer.type(schema)};")
    lines += [f"type {name} = {body};" for name, body in aliases.items()]
    codes = compile_files(tmp_path_factory.mktemp("gen"), {"generated.d.ts": "\n".join(lines) + "\n"})
    assert codes["generated.d.ts"] == set(), "\n".join(lines)
