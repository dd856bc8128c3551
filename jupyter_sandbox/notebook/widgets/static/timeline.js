// @ts-check
/**
 * The run timeline: HTML for a timeline document, and the pieces the run card
 * (card.js) draws with (escaping, durations, excerpts, mismatches, plans, progress).
 *
 * It renders a timeline document (docs/journal.md) to HTML strings built with
 * an escaping template tag, so no journal value can inject markup. The output
 * is split into keyed parts (run header; per attempt: heading, replayed group,
 * live entries). Entries are append-only, so a part whose key is unchanged is
 * unchanged. The classes are styled by timeline.css.
 */

/** @typedef {Record<string, any>} Entry  a journal entry (docs/journal.md) */
/** @typedef {{n: number, source_hash?: string, started?: number, ended?: number, outcome?: string, replayed?: number, first_seq?: number, resumed_from?: string[]}} Attempt */
/** @typedef {{version?: number, run?: Record<string, any>, attempts?: Attempt[], entries?: Entry[], pending?: Record<string, any>[], source?: string}} TimelineDoc */
/** @typedef {{done?: number, total?: number, percent?: number, message?: string}} Progress */
/** @typedef {{live?: boolean, progress?: Progress | null}} RenderOptions */
/** @typedef {{key: string, attempt: number | null, html: () => string}} Part */

// ---------------------------------------------------------------- escaping

/** Markup that is already safe; anything else interpolated by `h` is escaped. */
class Html {
  /** @param {string} s */
  constructor(s) { this.s = s; }
  toString() { return this.s; }
}

/** @type {Record<string, string>} */
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** @param {unknown} value @returns {string} */
export function esc(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** @param {unknown} v @returns {string} */
function piece(v) {
  if (v instanceof Html) return v.s;
  if (Array.isArray(v)) return v.map(piece).join('');
  return v == null || v === false ? '' : esc(v);
}

/**
 * Tagged template: `h\`<b>${x}</b>\`` escapes x unless it is Html; arrays are
 * joined, null/undefined/false vanish.
 * @param {TemplateStringsArray} strings @param {...unknown} values @returns {Html}
 */
function h(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => { out += piece(v) + strings[i + 1]; });
  return new Html(out);
}

// ---------------------------------------------------------------- formatting

/** @param {unknown} v @param {number} [indent] @returns {string} */
function toJson(v, indent) {
  try {
    return JSON.stringify(v, null, indent) ?? String(v);
  } catch {
    return String(v);
  }
}

/** @param {unknown} v @param {number} [max] */
function preview(v, max = 60) {
  const s = toJson(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A duration in seconds, e.g. "120 ms", "2.50 s", "3 min 4 s". @param {number} s */
export function duration(s) {
  if (!Number.isFinite(s)) return '';
  s = Math.max(s, 0);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${(s / 86400).toFixed(1)} d`;
}

/** @param {number | null | undefined} ms epoch milliseconds; '' when not a usable time */
function iso(ms) {
  // Past ±8.64e15 ms a Date is invalid and toISOString throws.
  return typeof ms === 'number' && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : '';
}

/** @param {number} n @param {string} one @param {string} many */
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * Line `line` (1-based) of `source` with a caret under `column`, in the same
 * shape as jupyter_sandbox.errors.excerpt.
 * @param {string | undefined} source @param {number | undefined} line @param {number | undefined} column
 */
export function excerpt(source, line, column) {
  if (!source || !line) return '';
  const lines = source.split(/\r\n|\r|\n/);
  if (line < 1 || line > lines.length) return '';
  const caret = `${' '.repeat(Math.max((column || 1) - 1, 0))}^`;
  return `${String(line).padStart(4)} | ${lines[line - 1]}\n     | ${caret}`;
}

// ---------------------------------------------------------------- index

/**
 * What the renderers look up across the whole document.
 * @typedef {{doc: TimelineDoc, entries: Entry[], source: string, t0: number | null,
 *   stepStart: Map<any, Entry>, callOf: Map<number, Entry>, byAttempt: Map<number, Entry[]>,
 *   attempts: Attempt[], plan: Entry | null, runKey: string}} Cx
 */

/** @param {TimelineDoc} doc @returns {Cx} */
function context(doc) {
  const entries = doc.entries ?? [];
  const stepStart = new Map();
  const callOf = new Map();
  const byAttempt = new Map();
  /** @type {Map<number, Entry>} */
  const lastCall = new Map();
  let plan = null;
  for (const e of entries) {
    const n = e.attempt ?? 1;
    if (!byAttempt.has(n)) byAttempt.set(n, []);
    byAttempt.get(n).push(e);
    if (e.kind === 'step' && e.phase === 'start') stepStart.set(e.id, e);
    else if (e.kind === 'call') lastCall.set(e.slot, e);
    else if (e.kind === 'result' && lastCall.has(e.slot)) callOf.set(e.seq, /** @type {Entry} */ (lastCall.get(e.slot)));
    else if (e.kind === 'plan') plan = e;
  }
  // Attempts come from the document, completed by any attempt an entry names.
  const known = new Map((doc.attempts ?? []).map((a) => [a.n, a]));
  for (const n of byAttempt.keys()) if (!known.has(n)) known.set(n, { n });
  const attempts = [...known.values()].sort((a, b) => a.n - b.n);
  const t0 = doc.run?.created ?? attempts[0]?.started ?? entries[0]?.at ?? null;
  return {
    doc, entries, source: doc.source ?? '', t0, stepStart, callOf, byAttempt, attempts, plan,
    runKey: String(doc.run?.id ?? ''),
  };
}

// ---------------------------------------------------------------- blocks

/** @param {string} label @param {unknown} value @param {string} key */
function jsonBlock(label, value, key) {
  if (value === undefined) return '';
  return h`<details class="jsbx-json" data-key="${key}"><summary>${label} <code>${preview(value)}</code></summary><pre>${toJson(value, 2)}</pre></details>`;
}

/** @param {string} kind @param {string} text */
const pill = (kind, text) => h`<span class="jsbx-pill jsbx-pill-${kind}">${text}</span>`;

/**
 * An error (entry `error`, run error) in red with its source excerpt.
 * @param {Record<string, any> | string} err @param {string} source
 */
function errorBlock(err, source) {
  const e = typeof err === 'string' ? { message: err } : err ?? {};
  const ex = e.source_line || excerpt(source, e.line, e.column);
  const where = e.line ? h` <span class="jsbx-where">workflow.js:${e.line}:${e.column ?? 1}</span>` : '';
  return h`<div class="jsbx-error"><div class="jsbx-err-title">${e.limit ? pill('limit', e.limit) : ''}${e.name || 'Error'}: ${e.message}${where}</div>${ex ? h`<pre class="jsbx-source">${ex}</pre>` : ''}${e.stack ? h`<details class="jsbx-json"><summary>stack</summary><pre>${e.stack}</pre></details>` : ''}</div>`;
}

/** @param {Record<string, any> | null | undefined} side */
function describe(side) {
  if (!side) return 'nothing';
  if (side.type === 'now' || side.type === 'random') return `a ${side.type} read`;
  return side.name ? `${side.type} ${side.name}` : `${side.type}`;
}

/** JSON with object keys sorted, as content keys are built. @param {unknown} v */
function canonical(v) {
  /** @param {any} x @returns {unknown} */
  const sorted = (x) => (Array.isArray(x) ? x.map(sorted)
    : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])])) : x);
  return toJson(sorted(v));
}

/**
 * A CallLogMismatchError as a side-by-side diff: recorded vs attempted.
 * @param {Record<string, any>} m {position, recorded, attempted, line, column, source_line}
 * @param {string} [source]
 */
export function mismatchHtml(m, source) {
  const rows = [['kind', 'type'], ['name', 'name'], ['input', 'input']].map(([label, field]) => {
    const a = m.recorded?.[field];
    const b = m.attempted?.[field];
    /** @param {Record<string, any> | null | undefined} side @param {unknown} v */
    const cell = (side, v) => {
      if (!side) return h`<td class="jsbx-none">nothing</td>`;
      if (field === 'input') return h`<td><pre>${toJson(v, 2)}</pre></td>`;
      return h`<td><code>${v ?? '—'}</code></td>`;
    };
    // Compared canonically, as content keys are: key order is no difference.
    const differs = canonical(a) !== canonical(b);
    return h`<tr class="${differs ? 'jsbx-differs' : ''}"><th>${label}</th>${cell(m.recorded, a)}${cell(m.attempted, b)}</tr>`;
  });
  const ex = m.source_line || excerpt(source, m.line, m.column);
  return h`<div class="jsbx-mismatch"><div class="jsbx-err-title">CallLogMismatchError: replay diverged at position ${m.position}</div><p>The journal recorded <b>${describe(m.recorded)}</b> here; the script now attempted <b>${describe(m.attempted)}</b>.</p><table class="jsbx-diff"><thead><tr><th>position ${m.position}</th><th>recorded (journal)</th><th>attempted (script now)</th></tr></thead><tbody>${rows}</tbody></table>${ex ? h`<pre class="jsbx-source">${ex}</pre>` : ''}<p class="jsbx-hint">Branch only on input, action results, ctx.now() and the recorded Date/Math.random.</p></div>`.s;
}

/** @param {Entry} c a call entry */
const callLabel = (c) => c.description || c.name;

// ---------------------------------------------------------------- entries

/**
 * Each kind's row: the text after the kind name, blocks below it, and meta.
 * @typedef {{main?: unknown, more?: unknown, meta?: string}} Row
 * @type {Record<string, (e: Entry, cx: Cx, key: string) => Row>}
 */
const KINDS = {
  call: (e, _cx, key) => ({
    main: h`<span class="jsbx-label">${callLabel(e)}</span>${e.description ? h` <code class="jsbx-name">${e.name}</code>` : ''}${e.op && e.op !== 'call' ? pill('op', e.op) : ''}${e.child ? h` <span class="jsbx-meta">child <code>${e.child}</code></span>` : ''}`,
    more: jsonBlock('input', e.input, `${key}:input`),
  }),
  result: (e, cx, key) => {
    const call = cx.callOf.get(e.seq);
    const label = call ? h`<span class="jsbx-label">${callLabel(call)}</span>` : h`slot ${e.slot}`;
    const err = e.error ?? {};
    return {
      main: e.ok === false
        ? h`${label} ${pill('fail', 'failed')} <span class="jsbx-errtext">${err.name}: ${err.message}</span>`
        : h`${label} ${pill('ok', 'ok')}`,
      more: e.ok === false ? '' : jsonBlock('value', e.value, `${key}:value`),
      meta: call && typeof e.at === 'number' && typeof call.at === 'number' ? duration(e.at - call.at) : '',
    };
  },
  now: (e) => ({ main: h`clock read <code>${iso(e.value)}</code>` }),
  random: (e) => ({ main: h`random read <code>${e.value}</code>` }),
  timer: (e) => ({ main: h`sleep ${duration((e.ms ?? 0) / 1000)}${e.due ? h`, due <code>${iso(e.due)}</code>` : ''}` }),
  fired: (e) => ({ main: h`timer fired (slot ${e.slot})` }),
  wait: (e, _cx, key) => ({
    main: h`wait for an event${e.timeout != null ? `, timeout ${duration(e.timeout / 1000)}` : ', no timeout'}`,
    more: jsonBlock('match', e.match, `${key}:match`),
  }),
  event: (e, _cx, key) => ({
    main: e.event == null ? h`timed out, no event` : h`event delivered${e.signal ? h` (signal <code>${e.signal}</code>)` : ''}`,
    more: e.event == null ? '' : jsonBlock('event', e.event, `${key}:event`),
  }),
  interrupt: (e, _cx, key) => ({
    main: h`<span class="jsbx-label">${e.name}</span> needs an answer <code>${e.id}</code>`,
    more: [jsonBlock('input', e.input, `${key}:input`), jsonBlock('data', e.data, `${key}:data`), jsonBlock('state', e.state, `${key}:state`)],
  }),
  answer: (e, _cx, key) => ({
    main: h`answered <code>${e.id}</code>`,
    more: jsonBlock('value', e.value, `${key}:value`),
  }),
  console: (e) => ({ main: h`${pill(`level-${e.level}`, e.level)} <span class="jsbx-msg">${e.message}</span>` }),
  log: (e, _cx, key) => ({
    main: h`${pill(`level-${e.level}`, e.level)} <span class="jsbx-msg">${e.message}</span>`,
    more: jsonBlock('data', e.data, `${key}:data`),
  }),
  plan: (e) => ({ main: h`plan updated`, more: planList(e.plan) }),
  attempt: (e) => ({
    main: h`attempt ${e.n} started${e.resumed_from?.length ? h`, answering <code>${e.resumed_from.join(', ')}</code>` : ''}${e.source_hash ? h` · source <code>${String(e.source_hash).slice(0, 8)}</code>` : ''}`,
  }),
  error: (e, cx) => ({ more: errorBlock(e.error, cx.source) }),
  mismatch: (e, cx) => ({ more: new Html(mismatchHtml(e, cx.source)) }),
};

/** @param {Entry} e @param {Cx} cx */
function offset(e, cx) {
  return typeof e.at === 'number' && cx.t0 != null ? `+${duration(e.at - cx.t0)}` : '';
}

/** @param {Entry} e @param {string} mark @param {Cx} cx @param {string} scope */
function entryRow(e, mark, cx, scope) {
  const key = `${scope}:${e.seq}`;
  const kind = KINDS[e.kind];
  const row = kind ? kind(e, cx, key) : { more: jsonBlock('entry', e, `${key}:entry`) };
  const title = [`seq ${e.seq}`, e.slot != null ? `slot ${e.slot}` : '', `attempt ${e.attempt ?? 1}`, iso((e.at ?? NaN) * 1000)].filter(Boolean).join(' · ');
  const meta = [row.meta, offset(e, cx)].filter(Boolean).join(' · ');
  return h`<li class="jsbx-entry jsbx-k-${e.kind}" data-seq="${e.seq}" data-kind="${e.kind}" data-mark="${mark}"><div class="jsbx-line"><span class="jsbx-seq" title="${title}">#${e.seq}</span><span class="jsbx-mark">${mark}</span><span class="jsbx-kind">${e.kind}</span><span class="jsbx-main">${row.main}</span><span class="jsbx-meta">${meta}</span></div>${row.more}</li>`;
}

// ---------------------------------------------------------------- steps

/**
 * @typedef {{id?: any, start?: Entry, end?: Entry, items: Item[]}} StepNode
 * @typedef {{entry: Entry} | {step: StepNode}} Item
 */

/**
 * Nest a run of entries by step: a step's start opens a node under its
 * parent, an entry goes under the step it names, the end closes the node. A
 * step opened before this run of entries (in a replayed attempt) reappears
 * as a continued node.
 * @param {Entry[]} entries @param {Cx} cx @returns {StepNode}
 */
function nest(entries, cx) {
  /** @type {StepNode} */
  const root = { items: [] };
  /** @type {Map<any, StepNode>} */
  const nodes = new Map();
  /** @param {any} id @param {number} depth @returns {StepNode} */
  const nodeFor = (id, depth = 0) => {
    if (id == null || depth > 64) return root;
    let node = nodes.get(id);
    if (!node) {
      node = { id, items: [] };
      nodes.set(id, node);
      nodeFor(cx.stepStart.get(id)?.parent, depth + 1).items.push({ step: node });
    }
    return node;
  };
  for (const e of entries) {
    if (e.kind === 'step' && e.phase === 'start' && !nodes.has(e.id)) {
      const node = { id: e.id, start: e, items: [] };
      nodes.set(e.id, node);
      nodeFor(e.parent).items.push({ step: node });
    } else if (e.kind === 'step' && e.phase === 'end') {
      nodeFor(e.id).end = e;
    } else if (e.kind !== 'step') {
      nodeFor(e.step).items.push({ entry: e });
    }
  }
  return root;
}

/** @param {StepNode} node @param {string} mark @param {Cx} cx @param {string} scope @returns {Html} */
function stepHtml(node, mark, cx, scope) {
  const { start, end } = node;
  const label = start?.label ?? cx.stepStart.get(node.id)?.label ?? `step ${node.id}`;
  const outcome = end ? end.outcome ?? 'ok' : 'open';
  const took = start && end && typeof end.at === 'number' ? duration(end.at - start.at) : '';
  const endRow = end ? entryRowStepEnd(end, mark, cx) : '';
  return h`<li class="jsbx-step-item"><details class="jsbx-step" data-outcome="${outcome}" data-key="${scope}:step:${node.id}" data-step="${node.id}"${start ? h` data-seq="${start.seq}"` : ''} data-mark="${mark}" open><summary>${start ? h`<span class="jsbx-seq">#${start.seq}</span><span class="jsbx-mark">${mark}</span>` : ''}<span class="jsbx-kind">step</span><span class="jsbx-label">${label}</span>${start ? '' : h` <span class="jsbx-meta">(continued)</span>`} ${pill(`outcome-${outcome}`, outcome)}<span class="jsbx-meta">${took}</span></summary>${itemsHtml(node.items, mark, cx, scope)}${endRow}</details></li>`;
}

/** @param {Entry} end @param {string} mark @param {Cx} cx */
function entryRowStepEnd(end, mark, cx) {
  const err = end.error ? errorBlock(end.error, cx.source) : '';
  return h`<div class="jsbx-entry jsbx-k-step-end" data-seq="${end.seq}" data-kind="step" data-mark="${mark}"><div class="jsbx-line"><span class="jsbx-seq">#${end.seq}</span><span class="jsbx-mark">${mark}</span><span class="jsbx-kind">end</span><span class="jsbx-main">${end.outcome ?? 'ok'}</span><span class="jsbx-meta">${offset(end, cx)}</span></div>${err}</div>`;
}

/** @param {Item[]} items @param {string} mark @param {Cx} cx @param {string} scope @returns {Html} */
function itemsHtml(items, mark, cx, scope) {
  if (!items.length) return h``;
  return h`<ol class="jsbx-entries">${items.map((it) => ('step' in it ? stepHtml(it.step, mark, cx, scope) : entryRow(it.entry, mark, cx, scope)))}</ol>`;
}

// ---------------------------------------------------------------- header

/** A `ctx.plan` as a checklist: strings, or `{title, done}` items. @param {unknown} plan */
export function planList(plan) {
  const items = Array.isArray(plan) ? plan : [];
  return h`<ul class="jsbx-plan">${items.map((it) => {
    const done = typeof it === 'object' && it !== null && Boolean(it.done);
    const title = typeof it === 'object' && it !== null ? it.title : it;
    return h`<li data-done="${String(done)}"><span class="jsbx-check">${done ? '☑' : '☐'}</span> ${title}</li>`;
  })}</ul>`;
}

/** A progress bar: `done`/`total` or `percent`, and a `message`. @param {Progress} p */
export function progressHtml(p) {
  const pct = typeof p.percent === 'number' ? p.percent
    : typeof p.done === 'number' && p.total ? (100 * p.done) / p.total : null;
  const width = pct == null ? 100 : Math.min(Math.max(pct, 0), 100);
  const count = typeof p.done === 'number' ? `${p.done}${p.total ? ` / ${p.total}` : ''}` : '';
  const text = [p.message, count, pct == null ? '' : `${Math.round(width)}%`].filter(Boolean).join(' · ');
  return h`<div class="jsbx-progress" data-indeterminate="${String(pct == null)}"><div class="jsbx-bar"><div class="jsbx-fill" style="width:${width.toFixed(1)}%"></div></div><span class="jsbx-meta">${text}</span></div>`;
}

/** @param {Cx} cx @param {RenderOptions} options */
function runHead(cx, options) {
  const run = cx.doc.run ?? {};
  const status = run.status ?? 'unknown';
  const facts = [run.kind, plural(cx.attempts.length, 'attempt', 'attempts'), plural(cx.entries.length, 'entry', 'entries'),
    run.created ? `created ${iso(run.created * 1000)}` : ''].filter(Boolean).join(' · ');
  const plan = cx.plan?.plan ?? [];
  const done = plan.filter((/** @type {any} */ it) => it && it.done).length;
  return h`<div class="jsbx-run"><span class="jsbx-status" data-status="${status}">${status}</span>${options.live && status === 'running' ? h`<span class="jsbx-live" title="updating live">●</span>` : ''}<span class="jsbx-run-name">${run.name || 'run'}</span> <code>${run.id}</code> <span class="jsbx-meta">${facts}</span>${run.parent ? h` <span class="jsbx-meta">child of <code>${run.parent}</code></span>` : ''}${run.successor ? h` <span class="jsbx-meta">continued as <code>${run.successor}</code></span>` : ''}</div>${options.live && options.progress ? progressHtml(options.progress) : ''}${run.error ? errorBlock(run.error, cx.source) : ''}${run.output != null ? jsonBlock('output', run.output, 'run:output') : ''}${cx.plan ? h`<div class="jsbx-plan-box" data-seq="${cx.plan.seq}"><b>Plan</b> <span class="jsbx-meta">${done}/${plan.length} done</span>${planList(plan)}</div>` : ''}${(cx.doc.pending ?? []).map((p) => h`<div class="jsbx-pending"><b>⏸ waiting for an answer:</b> <span class="jsbx-label">${p.name}</span> <code>${p.id}</code>${jsonBlock('data', p.data, `pending:${p.id}`)}</div>`)}`;
}

/** @param {Attempt} a @param {Cx} cx @param {Attempt | undefined} prev */
function attemptHead(a, cx, prev) {
  const before = cx.entries.filter((e) => (e.attempt ?? 1) < a.n).length;
  const replayed = a.replayed ?? before;
  const what = a.n === 1 ? 'first run' : `resumed, ${plural(replayed, 'entry', 'entries')} replayed from the journal`;
  const took = typeof a.started === 'number' && typeof a.ended === 'number' ? duration(a.ended - a.started) : '';
  const edited = prev?.source_hash && a.source_hash && prev.source_hash !== a.source_hash;
  return h`<div class="jsbx-attempt-head" data-attempt="${a.n}"><b>Attempt ${a.n}</b> — ${what}${a.outcome ? h` <span class="jsbx-status" data-status="${a.outcome}">${a.outcome}</span>` : ''}${edited ? pill('edited', 'source edited') : ''}<span class="jsbx-meta">${took}</span></div>`;
}

// ---------------------------------------------------------------- parts

/**
 * The document as keyed parts, in order. A part's key changes whenever its
 * HTML would, so callers may keep the DOM of parts whose key they already have.
 * @param {TimelineDoc} doc @param {RenderOptions} [options] @returns {Part[]}
 */
export function timelineParts(doc, options = {}) {
  const cx = context(doc ?? {});
  const run = cx.runKey;
  const head = runHead(cx, options).s;
  /** @type {Part[]} */
  const parts = [{ key: `${run}|head|${head}`, attempt: null, html: () => head }];
  cx.attempts.forEach((a, i) => {
    const ahead = attemptHead(a, cx, cx.attempts[i - 1]).s;
    parts.push({ key: `${run}|${a.n}|head|${ahead}`, attempt: a.n, html: () => ahead });
    if (a.n > 1) {
      const earlier = cx.entries.filter((e) => (e.attempt ?? 1) < a.n);
      const scope = `r${a.n}`;
      parts.push({
        key: `${run}|${a.n}|replayed|${earlier.length}`,
        attempt: a.n,
        html: () => h`<details class="jsbx-replayed" data-key="${scope}"><summary>↺ replayed ${plural(earlier.length, 'entry', 'entries')}</summary>${itemsHtml(nest(earlier, cx).items, 'replayed', cx, scope)}</details>`.s,
      });
    }
    const own = cx.byAttempt.get(a.n) ?? [];
    parts.push({
      key: `${run}|${a.n}|live|${own.length}|${own.length ? own[own.length - 1].seq : ''}`,
      attempt: a.n,
      html: () => (own.length ? itemsHtml(nest(own, cx).items, 'live', cx, `a${a.n}`).s : h`<p class="jsbx-meta jsbx-empty">no entries yet</p>`.s),
    });
  });
  return parts;
}

/**
 * The whole timeline as one HTML string.
 * @param {TimelineDoc} doc @param {RenderOptions} [options]
 */
export function timelineHtml(doc, options = {}) {
  const parts = timelineParts(doc, options).map((p) => partHtml(p));
  return `<div class="jsbx-host jsbx-timeline">${parts.join('')}</div>`;
}

/** @param {Part} p */
const partHtml = (p) => `<div class="jsbx-part"${p.attempt == null ? '' : ` data-attempt="${p.attempt}"`}>${p.html()}</div>`;
