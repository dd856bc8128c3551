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
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest
from examples import scaled
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from test_typescript import schemas  # the generator the renderer's own tests use
from typing_extensions import TypedDict

from jupyter_sandbox import Sandbox
from jupyter_sandbox.agents.catalog import ActionSpec
from jupyter_sandbox.agents.schema_types import Renderer
from jupyter_sandbox.agents.typescript import declarations
from jupyter_sandbox.naming import check_name

TSC = Path(__file__).parent / "ts" / "node_modules" / ".bin" / "tsc"
CHECK = Path(__file__).parent / "ts" / "check.js"  # the compiler's API: many programs in one process
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

    @sb.action(name="files.read_file")
    def read_file(path: str) -> Sent:
        """A namespaced action."""

    @sb.action(name="a.b.c")
    def deep(n: int = 0) -> list[int]:
        """Three segments deep."""

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
    "namespaces_at_any_depth": """
        const sent = await actions.files.read_file("/readme.txt");
        const ns: number[] = await actions.a.b.c(2);
        const none = await actions.a.b.c();
        return [sent.id, ns.length, none];
    """,
    "ctx_call_by_a_dotted_name": """
        const sent = await ctx.call("files.read_file", "/readme.txt");
        const ns: number[] = await ctx.call("a.b.c", 1, {description: "deep"});
        const now: number = await ctx.call("ping");
        return [sent.id.toUpperCase(), ns, now];
    """,
    "wait_for_event_with_a_value_or_an_object": """
        const go = await ctx.waitForEvent("go");
        const n = await ctx.waitForEvent(42, {timeout: 1000});
        const ok = await ctx.waitForEvent<{ok: boolean}>({type: "approved"});
        const any = await ctx.waitForEvent();
        return [go, n, ok?.ok, any];
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
    "ctx_call_with_a_wrong_input_for_a_dotted_name": (
        """
        await ctx.call("files.read_file", 42);
    """,
        {"TS2345"},
    ),
    "ctx_call_result_used_wrongly": (
        """
        const ns = await ctx.call("a.b.c", 1);
        const s: string = ns;
    """,
        {"TS2322"},
    ),
    "misspelt_namespace": (
        """
        await actions.flies.read_file("/readme.txt");
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


def compile_programs(programs: dict[str, dict[str, str]]) -> dict[str, dict[str, set[str]]]:
    """Type-check many programs (name → {file name → text}) in one compiler process: each one's error codes
    by file. Each program is compiled on its own, as ``tsc --noEmit -p`` would (tests/ts/check.js)."""
    request = {
        "options": CONFIG["compilerOptions"],
        "programs": {p: {f"/{p}/{name}": text for name, text in files.items()} for p, files in programs.items()},
    }
    run = subprocess.run(["node", str(CHECK)], input=json.dumps(request), capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise AssertionError(f"the compiler did not run: {run.returncode}\n{run.stderr}")
    found = json.loads(run.stdout)
    return {p: {Path(f).name: set(codes) for f, codes in files.items()} for p, files in found.items()}


def compile_files(folder: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """One program's error codes by file (``folder`` keeps a copy of the files to read when a test fails)."""
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return compile_programs({folder.name: files})[folder.name]


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


# -- generated catalogs: namespaces at any depth, any schemas ------------------------------------

segment = st.one_of(
    st.sampled_from(["files", "a", "b", "read_file", "_x", "données", "π", "X1"]),
    st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
)
action_names = st.lists(st.lists(segment, min_size=1, max_size=4).map(".".join), min_size=0, max_size=6, unique=True)


@st.composite
def catalogs(draw) -> list[ActionSpec]:
    """Catalog entries under names with namespaces (none also the namespace of another, as registering
    requires), with any schemas, no input, or an optional one."""
    taken: list[str] = []
    for name in draw(action_names):
        try:
            check_name(name, taken)
        except ValueError:
            continue
        taken.append(name)
    return [
        ActionSpec(
            name,
            input_schema=draw(st.none() | schemas),
            output_schema=draw(st.none() | schemas),
            takes_input=draw(st.booleans()),
            input_optional=draw(st.booleans()),
        )
        for name in taken
    ]


def _reach(name: str) -> str:
    """How a script reaches an action: ``actions.a.b.c``."""
    return "actions" + "".join(f".{part}" for part in name.split("."))


def calls_both_ways(specs: list[ActionSpec]) -> str:
    """A script calling each action as ``actions.a.b(x)`` and as ``ctx.call("a.b", x)`` with the same input,
    whose results must have one type."""
    head, body = [], []
    for i, spec in enumerate(specs):
        args = ""
        if spec.takes_input:
            head.append(f"declare const in{i}: Parameters<typeof {_reach(spec.name)}>[0];")
            args = f"in{i}"
        body += [
            f"const direct{i} = await {_reach(spec.name)}({args});",
            f"const called{i} = await ctx.call({json.dumps(spec.name)}{', ' if args else ''}{args});",
            f"const same{i}: [typeof direct{i}, typeof called{i}] = [called{i}, direct{i}];",
        ]
    return "export {};\n" + "\n".join(head) + "\n" + wrap("\n".join(body)).removeprefix("export {};\n")


@settings(max_examples=scaled(3), phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
@given(st.lists(catalogs(), min_size=8, max_size=8))
def test_the_declarations_of_any_catalog_compile_and_type_ctx_call_as_the_method(tsc, batch):
    programs = {}
    for n, specs in enumerate(batch):
        missing = "".join(spec.name for spec in specs) + "_not_an_action"
        programs[f"catalog{n}"] = {
            "world.d.ts": declarations(specs),
            "good.ts": calls_both_ways(specs),
            "bad.ts": wrap(f"const name: ActionName = {json.dumps(missing)};"),  # what ctx.call accepts
        }
    checked = compile_programs(programs)
    for n, specs in enumerate(batch):
        shown = f"catalog{n}: {[s.name for s in specs]}\n{programs[f'catalog{n}']['world.d.ts']}"
        assert checked[f"catalog{n}"]["world.d.ts"] == set(), shown
        assert checked[f"catalog{n}"]["good.ts"] == set(), shown + programs[f"catalog{n}"]["good.ts"]
        assert checked[f"catalog{n}"]["bad.ts"] == {"TS2322"}, shown


# -- the MCP servers the tests use ---------------------------------------------------------------

MCP_SERVER = str(Path(__file__).resolve().parent / "mcp_servers" / "files.py")

MCP_GOOD = """
    const page = await actions.files.read_file({path: "/readme.txt"});
    const again = await ctx.call("files.read_file", {path: "/readme.txt"});
    const wrote = await actions.files.write_file({path: "/a", text: "hi"});
    await actions.files.sleep({seconds: 0});
    return [page.text.toUpperCase(), again.size + 1, wrote];
"""
MCP_BAD = {
    "a_wrong_argument_type": ("await ctx.call('files.read_file', {path: 1});", {"TS2322"}),
    "a_missing_argument": ("await actions.files.write_file({path: '/a'});", {"TS2345"}),
    "a_misspelt_tool": ("await actions.files.reed_file({path: '/a'});", {"TS2551"}),
    "a_wrong_use_of_the_output": ("const n: number = (await actions.files.read_file({path: '/a'})).text;", {"TS2322"}),
}


@pytest.fixture(scope="module")
def mcp_checked(tsc):
    sb = Sandbox()
    try:
        sb.mcp("files", [sys.executable, MCP_SERVER, "files"])
        files = {"world.d.ts": sb.declarations(), "good.ts": wrap(MCP_GOOD)}
        files.update({f"bad_{name}.ts": wrap(body) for name, (body, _) in MCP_BAD.items()})
    finally:
        sb.close()
    return compile_programs({"mcp": files})["mcp"]


def test_an_mcp_servers_declarations_compile_with_its_input_and_output_schemas(mcp_checked):
    assert mcp_checked["world.d.ts"] == set()
    assert mcp_checked["good.ts"] == set()


@pytest.mark.parametrize("name", sorted(MCP_BAD))
def test_a_wrong_call_of_an_mcp_tool_fails_to_compile(mcp_checked, name):
    assert mcp_checked[f"bad_{name}.ts"] == MCP_BAD[name][1]
