"""Benchmark: the run card's costs, each beside a floor measured in the same run.

    python bench/card.py            # 5 repetitions; about a minute on 2 cores (Chromium included)
    python bench/card.py --quick    # 2 repetitions, N = 200 (a smoke run)

1. A 1,000-action ``%%sandbox`` cell with its card displayed (live updates at
   most 4 a second, each read from the store), against the same script through
   ``sb.eval`` with no card (the final card reads the whole journal once). Target: ≤ 1.5×.
   And a 3 s run (60 actions of 50 ms, ``ctx.progress`` after each) with its live card, against it
   without. Target: ≤ 1.3×.
2. First paint of a 5,000-entry run's saved card in Chromium (Debian's, headless):
   ``mountCard`` of the saved document up to the next animation frame, against
   mounting an empty card. Target: ≤ 500 ms.
3. The saved output (the whole mime bundle, as nbformat stores it) at 5,000 entries. Target: < 256 KB.
4. Click to resumed result: the comm message a click sends, up to the card document saying
   "completed", against ``sb.eval("return 1")``. Target: < 0.5 s.

Nothing here asserts a timing; it prints a markdown table and writes it to bench/results/card.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STATIC = ROOT / "jupyter_sandbox" / "notebook" / "widgets" / "static"
LOOP = "let s = 0\nfor (let i = 0; i < {n}; i++) s = await actions.inc(s)\nreturn s"
SLOW = (
    "let s = 0\nfor (let i = 0; i < 60; i++) {{ s = await actions.nap(s)\n"
    "ctx.progress({{done: i + 1, total: 60}}) }}\nreturn s"
)


def median_of(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def shell():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    start_ipython()
    ip = InteractiveShell.instance()
    import jupyter_sandbox

    jupyter_sandbox.load_ipython_extension(ip)
    ip.run_line_magic("config", "SandboxMagics.scheduler_interval = 0")
    return ip


def cell_vs_eval(ip, n: int, reps: int, script: str = LOOP) -> tuple[float, float]:
    from IPython.utils.capture import capture_output

    from jupyter_sandbox.notebook.defaults import default_sandbox

    sb = default_sandbox()
    sb.action(lambda x: x + 1, name="inc")

    def nap(x):
        time.sleep(0.05)
        return x + 1

    sb.action(nap, name="nap")
    source = script.format(n=n)

    def with_card():
        with capture_output():
            ok = ip.run_cell(f"%%sandbox --journal-entries 20000\n{source}").success
        assert ok

    def without():
        from jupyter_sandbox import Limits

        assert sb.eval(source, limits=Limits(journal_entries=20000)).output in (n, 60)

    without()  # warm both paths once
    with_card()
    return median_of(with_card, reps), median_of(without, reps)


def big_card(n_actions: int) -> dict:
    from jupyter_sandbox import Limits, Sandbox
    from jupyter_sandbox.notebook.cards import RunCard

    with Sandbox(":memory:") as sb:
        sb.action(lambda x: x + 1, name="inc")
        sb.action(lambda x: x * 2, name="dbl")
        # alternate the actions: the worst case for grouping (no two neighbours alike)
        src = f"for (let i = 0; i < {n_actions}; i++) await (i % 2 ? actions.inc(i) : actions.dbl(i))\nreturn 1"
        result = sb.eval(src, limits=Limits(journal_entries=n_actions * 2 + 10))
        return RunCard(sb, result.run_id).bundle()


def first_paint(bundle: dict, reps: int) -> tuple[float, float] | None:
    chromium = shutil.which("chromium")
    if not chromium:
        return None
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from browser_support import CHROMIUM_ARGS

    doc = bundle["application/vnd.jupyter-sandbox.run+json"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("timeline.js", "card.js", "timeline.css", "card.css"):
            shutil.copy(STATIC / name, Path(tmp) / name)
        (Path(tmp) / "doc.json").write_text(json.dumps(doc))
        (Path(tmp) / "page.html").write_text(
            '<html><head><link rel="stylesheet" href="timeline.css"><link rel="stylesheet" href="card.css"></head>'
            '<body><div id="out"></div><script type="module">import { mountCard } from "./card.js";'
            "window.paint = (doc) => new Promise((done) => { const node = document.getElementById('out');"
            "node.innerHTML = ''; const t = performance.now(); mountCard(node, doc, {send: null});"
            "requestAnimationFrame(() => setTimeout(() => done(performance.now() - t), 0)); });"
            "window.ready = true;</script></body></html>"
        )
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_())
            import http.server
            import threading

            handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=tmp)  # noqa: E731
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/page.html")
                page.wait_for_function("() => window.ready")
                empty = {"run_id": "r", "rows": [], "attempts": [], "pending": [], "answered": []}
                paints = [page.evaluate("(d) => window.paint(d)", doc) / 1000 for _ in range(reps)]
                floors = [page.evaluate("(d) => window.paint(d)", empty) / 1000 for _ in range(reps)]
            finally:
                server.shutdown()
                browser.close()
    return statistics.median(paints), statistics.median(floors)


def click_to_result(reps: int) -> tuple[float, float]:
    from jupyter_sandbox import Sandbox
    from jupyter_sandbox.notebook import cards

    class Comm:
        def __init__(self):
            self.sent, self.handler = [], None

        def send(self, data):
            self.sent.append(data)

        def on_msg(self, handler):
            self.handler = handler

        def on_close(self, handler):
            pass

    times, floors = [], []
    with tempfile.TemporaryDirectory() as tmp:
        sb = Sandbox(os.path.join(tmp, "runs.sqlite"))
        sb.action(lambda x: x, name="send", approval=True)
        from jupyter_sandbox.notebook import defaults

        defaults.set_default_store(sb.store.path)
        for _ in range(reps):
            try:
                sb.eval("return await actions.send(1)")
            except Exception as exc:
                run_id = exc.run_id
            comm = Comm()
            link = cards._Link(comm, sb, run_id)
            link.refresh()
            interrupt = comm.sent[-1]["doc"]["pending"][0]["id"]
            t = time.perf_counter()
            link.on_msg({"content": {"data": {"type": "answer", "interrupt_id": interrupt, "choice": "approve"}}})
            assert comm.sent[-1]["doc"]["status"] == "completed"
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            sb.eval("return 1")
            floors.append(time.perf_counter() - t)
        sb.close()
    return statistics.median(times), statistics.median(floors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "card.md"))
    args = parser.parse_args()
    reps, n = (2, 200) if args.quick else (5, 1000)
    load = os.getloadavg()[0]
    workdir = tempfile.mkdtemp()
    os.chdir(workdir)  # the default store goes to .sandbox/ here
    ip = shell()
    print("cell vs eval…", file=sys.stderr)
    card_s, eval_s = cell_vs_eval(ip, n, reps)
    print("3 s run with progress…", file=sys.stderr)
    slow_s, slow_floor = cell_vs_eval(ip, n, reps, SLOW)
    print("5,000-entry card…", file=sys.stderr)
    bundle = big_card(2500)
    size = len(json.dumps(bundle))
    print("first paint…", file=sys.stderr)
    paint = first_paint(bundle, reps)
    print("click to result…", file=sys.stderr)
    click_s, click_floor = click_to_result(reps)
    rows = [
        (
            "1,000-action cell with its card" if n == 1000 else f"{n}-action cell with its card",
            f"{card_s * 1000:.0f} ms",
            f"sb.eval, no card: {eval_s * 1000:.0f} ms",
            f"{card_s / eval_s:.2f}×",
            "≤ 1.5×",
        ),
        (
            "60 × 50 ms actions with ctx.progress, live card",
            f"{slow_s * 1000:.0f} ms",
            f"sb.eval, no card: {slow_floor * 1000:.0f} ms",
            f"{slow_s / slow_floor:.2f}×",
            "≤ 1.3×",
        ),
        (
            "first paint, 5,000 entries (Chromium)",
            f"{paint[0] * 1000:.0f} ms" if paint else "no chromium",
            f"empty card: {paint[1] * 1000:.1f} ms" if paint else "",
            "",
            "≤ 500 ms",
        ),
        ("saved output, 5,000 entries", f"{size / 1024:.1f} KB", "", "", "< 256 KB"),
        (
            "click to resumed result",
            f"{click_s * 1000:.0f} ms",
            f"sb.eval('return 1'): {click_floor * 1000:.1f} ms",
            "",
            "< 500 ms",
        ),
    ]
    head = ("measure", "median", "floor (same run)", "ratio", "target")
    lines = [
        f"# run card bench ({reps} repetitions, load {load:.2f} → {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    os.chdir(ROOT)
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
