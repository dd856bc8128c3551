// Unit tests of jupyter_sandbox/notebook/widgets/static/timeline.js (node --test; run by
// tests/test_timeline_render.py).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { duration, mismatchHtml, timelineHtml, timelineParts } from '../../jupyter_sandbox/notebook/widgets/static/timeline.js';

const DOC = JSON.parse(fs.readFileSync(new URL('../fixtures/timeline_doc.json', import.meta.url), 'utf8'));
const copy = () => structuredClone(DOC);

test('timelineHtml renders every entry of the document', () => {
  const html = timelineHtml(copy());
  for (const e of DOC.entries) assert.match(html, new RegExp(`data-seq="${e.seq}"`));
});

test('values that look like markup are escaped', () => {
  const doc = copy();
  doc.run.name = '<img src=x onerror=alert(1)>';
  const html = timelineHtml(doc);
  assert.ok(!html.includes('<img'));
  assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
});

test('a live progress patch shows a bar of done / total', () => {
  const html = timelineHtml(copy(), { live: true, progress: { done: 1, total: 4, message: 'emails' } });
  assert.ok(html.includes('style="width:25.0%"'));
  assert.ok(html.includes('emails · 1 / 4 · 25%'));
});

test('progress is not shown in a static rendering', () => {
  const html = timelineHtml(copy(), { live: false, progress: { done: 1, total: 4 } });
  assert.ok(!html.includes('jsbx-progress'));
});

test('parts are keyed by run, attempt and extent', () => {
  const keys = timelineParts(copy()).map((p) => p.key.match(/^[^|]*\|(?:head|\d+\|\w+)/)?.[0]);
  assert.deepEqual(keys, [
    'r-demo|head',
    'r-demo|1|head', 'r-demo|1|live',
    'r-demo|2|head', 'r-demo|2|replayed', 'r-demo|2|live',
    'r-demo|3|head', 'r-demo|3|replayed', 'r-demo|3|live'
  ]);
});

test('a mismatch diff ignores key order, as content keys do', () => {
  const html = mismatchHtml({
    position: 1,
    recorded: { type: 'action', name: 'a', input: { x: 1, y: [{ q: 1, p: 2 }] } },
    attempted: { type: 'action', name: 'b', input: { y: [{ p: 2, q: 1 }], x: 1 } }
  });
  const rows = [...html.matchAll(/<tr class="([^"]*)"><th>(\w+)/g)].map((m) => [m[2], m[1]]);
  assert.deepEqual(rows, [['kind', ''], ['name', 'jsbx-differs'], ['input', '']]);
});

test('duration reads like a person would say it', () => {
  assert.deepEqual([0.25, 2.5, 42, 125, 7300, 200000].map(duration),
    ['250 ms', '2.50 s', '42.0 s', '2 min 5 s', '2 h 1 min', '2.3 d']);
});

/** A fake anywidget model: get/on/off plus a way to emit events. */
function fakeModel(doc) {
  const handlers = new Map();
  const model = {
    doc,
    get: (name) => model[name],
    on: (event, fn) => handlers.set(event, [...(handlers.get(event) ?? []), fn]),
    off: (event, fn) => handlers.set(event, (handlers.get(event) ?? []).filter((f) => f !== fn)),
    emit: (event, ...args) => (handlers.get(event) ?? []).forEach((fn) => fn(...args))
  };
  return model;
}
const frame = () => new Promise((resolve) => setTimeout(resolve, 40));
