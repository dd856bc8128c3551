// Unit tests of jupyter_sandbox/notebook/widgets/static/timeline.js (node --test; run by
// tests/test_timeline_render.py). The DOM is a small fake: enough to check
// which parts renderTimeline rebuilds, without a browser.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import widget, {
  applyMessage,
  duration,
  mismatchHtml,
  renderTimeline,
  timelineHtml,
  timelineParts,
  viewState
} from '../../jupyter_sandbox/notebook/widgets/static/timeline.js';

const DOC = JSON.parse(fs.readFileSync(new URL('../fixtures/timeline_doc.json', import.meta.url), 'utf8'));
const copy = () => structuredClone(DOC);

/** A DOM element with just what renderTimeline uses; innerHTML is not parsed. */
class FakeElement {
  constructor(tag, ownerDocument) {
    this.tag = tag;
    this.ownerDocument = ownerDocument;
    this.childNodes = [];
    this.parentNode = null;
    this.className = '';
    this.html = '';
  }
  set innerHTML(html) {
    const child = this.ownerDocument.createElement('div');
    child.html = html;
    this.childNodes = [];
    this.appendChild(child);
  }
  get firstElementChild() { return this.childNodes[0] ?? null; }
  get firstChild() { return this.childNodes[0] ?? null; }
  get nextSibling() {
    const siblings = this.parentNode?.childNodes ?? [];
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }
  insertBefore(node, ref) {
    node.remove();
    node.parentNode = this;
    const i = ref ? this.childNodes.indexOf(ref) : -1;
    this.childNodes.splice(i < 0 ? this.childNodes.length : i, 0, node);
    return node;
  }
  appendChild(node) { return this.insertBefore(node, null); }
  remove() {
    if (!this.parentNode) return;
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }
  querySelectorAll() { return []; }
  get text() { return this.html + this.childNodes.map((c) => c.text).join(''); }
}

const fakeContainer = () => {
  const document = { createElement: (tag) => new FakeElement(tag, document) };
  return document.createElement('div');
};
const parts = (container) => container.childNodes[0].childNodes;

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

test('renderTimeline puts one node per part in the container', () => {
  const container = fakeContainer();
  renderTimeline(copy(), container);
  assert.equal(parts(container).length, timelineParts(DOC).length);
  assert.match(container.text, /data-seq="28"/);
});

test('appending entries rebuilds only the header and the current attempt', () => {
  const container = fakeContainer();
  const state = viewState({ ...copy(), entries: DOC.entries.slice(0, 27) });
  renderTimeline(state.doc, container);
  const before = [...parts(container)];
  applyMessage(state, { type: 'append', entries: DOC.entries.slice(27) });
  renderTimeline(state.doc, container);
  const after = parts(container);
  const kept = after.map((node) => before.includes(node));
  // header (entry count changed), attempts 1 and 2 kept, attempt 3's live part rebuilt
  assert.deepEqual(kept, [false, true, true, true, true, true, true, true, false]);
  assert.match(after[8].text, /data-seq="28"/);
});

test('append ignores entries the view already has', () => {
  const state = viewState(copy());
  const changed = applyMessage(state, { type: 'append', entries: DOC.entries.slice(-2) });
  assert.equal(changed, false);
  assert.equal(state.doc.entries.length, DOC.entries.length);
});

test('viewState copies the entries so messages never touch the model', () => {
  const doc = copy();
  const state = viewState(doc);
  applyMessage(state, { type: 'append', entries: [{ seq: 99, kind: 'console', attempt: 3, level: 'log', message: 'x' }] });
  assert.equal(doc.entries.length, DOC.entries.length);
});

test('an attempt message updates the attempt with the same n', () => {
  const state = viewState(copy());
  applyMessage(state, { type: 'attempt', attempt: { n: 3, outcome: 'completed' } });
  assert.equal(state.doc.attempts.length, 3);
  assert.deepEqual(state.doc.attempts[2], { ...DOC.attempts[2], outcome: 'completed' });
});

test('an attempt message with a new n adds it', () => {
  const state = viewState(copy());
  applyMessage(state, { type: 'attempt', attempt: { n: 4 } });
  assert.deepEqual(state.doc.attempts.map((a) => a.n), [1, 2, 3, 4]);
});

test('a status message merges into the run', () => {
  const state = viewState(copy());
  applyMessage(state, { type: 'status', run: { status: 'running' } });
  assert.deepEqual(state.doc.run, { ...DOC.run, status: 'running' });
});

test('progress patches merge, and a null patch clears them', () => {
  const state = viewState(copy());
  applyMessage(state, { type: 'progress', patch: { done: 1, total: 4 } });
  applyMessage(state, { type: 'progress', patch: { done: 2 } });
  assert.deepEqual(state.progress, { done: 2, total: 4 });
  applyMessage(state, { type: 'progress', patch: null });
  assert.equal(state.progress, null);
});

test('an unknown message changes nothing', () => {
  assert.equal(applyMessage(viewState(copy()), { type: 'nope' }), false);
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

test('the widget renders appended entries on the next frame', async () => {
  const model = fakeModel({ ...copy(), entries: DOC.entries.slice(0, 27) });
  const el = fakeContainer();
  const cleanup = widget.render({ model, el });
  assert.doesNotMatch(el.text, /data-seq="28"/);
  model.emit('msg:custom', { type: 'append', entries: DOC.entries.slice(27) });
  await frame();
  assert.match(el.text, /data-seq="28"/);
  cleanup();
});

test('the widget re-renders fully when doc changes', async () => {
  const model = fakeModel(copy());
  const el = fakeContainer();
  const cleanup = widget.render({ model, el });
  model.doc = { ...copy(), run: { ...DOC.run, id: 'r-other' } };
  model.emit('change:doc');
  await frame();
  assert.equal(el.childNodes.length, 1);
  assert.match(el.text, /r-other/);
  assert.doesNotMatch(el.text, /<code>r-demo<\/code>/);
  cleanup();
});

test('after cleanup the widget ignores messages', async () => {
  const model = fakeModel({ ...copy(), entries: DOC.entries.slice(0, 27) });
  const el = fakeContainer();
  widget.render({ model, el })();
  model.emit('msg:custom', { type: 'append', entries: DOC.entries.slice(27) });
  await frame();
  assert.doesNotMatch(el.text, /data-seq="28"/);
});
