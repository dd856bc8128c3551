// @ts-check
/**
 * The run card: one renderer for the live view (the labextension's MIME
 * renderer), the saved view and the static text/html, which the kernel
 * produces by running this same file in QuickJS (notebook/card_html.py strips
 * the import/export lines and concatenates it after timeline.js).
 *
 * `cardHtml(doc)` is a pure function of a card document (notebook/card_doc.py):
 * everything interpolated is escaped by `h`. `mountCard(node, doc, send)` puts
 * it in the DOM, windows a long row list (only rows on screen exist), and
 * turns clicks into messages for the kernel (`send`), or does nothing while
 * the card is not attached to a kernel.
 */
import { esc, duration, excerpt, mismatchHtml, planList, progressHtml } from './timeline.js';

export const CARD_MIME = 'application/vnd.jupyter-sandbox.run+json';
/** Why a card's buttons are off: no kernel with the extension answered it. */
export const NOT_LOADED = 'run `%load_ext jupyter_sandbox` to make this card live';
export const ROW_HEIGHT = 22; // px; the windowed list relies on one height per row
export const WINDOW_FROM = 60; // rows: shorter lists are drawn whole
const VISIBLE = 14;

/** @typedef {Record<string, any>} Doc */
/** @typedef {Record<string, any>} Row */
/** @typedef {{send: ((msg: any) => boolean) | null, hint?: string, retry?: (() => void) | null}} Conn */

/** Markup that is already safe. */
class Safe {
  /** @param {string} s */
  constructor(s) { this.s = s; }
  toString() { return this.s; }
}
/** @param {unknown} v @returns {string} */
const part = (v) => (v instanceof Safe ? v.s : Array.isArray(v) ? v.map(part).join('') : v == null || v === false ? '' : esc(v));
/** @param {TemplateStringsArray} strings @param {...unknown} values */
function h(strings, ...values) {
  let out = strings[0];
  values.forEach((v, i) => { out += part(v) + strings[i + 1]; });
  return new Safe(out);
}

// Not toLocaleString: QuickJS has no locale data, and the static HTML must read as the live view.
const count = (/** @type {number} */ n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const plural = (/** @type {number} */ n, /** @type {string} */ one, /** @type {string} */ many) => `${count(n)} ${n === 1 ? one : many}`;
/** @param {number | null | undefined} s */
const secs = (s) => (typeof s === 'number' && Number.isFinite(s) ? duration(s) : '');

/** A cut value: its preview, and its detail behind an expander. @param {string} label @param {any} v */
function value(label, v) {
  if (!v) return '';
  if (!v.d) return h`<span class="jsbx-v"><span class="jsbx-meta">${label}</span> <code>${v.p}</code></span>`;
  return h`<details class="jsbx-v"><summary><span class="jsbx-meta">${label}</span> <code>${v.p}</code> <span class="jsbx-meta">${count(v.n)} chars</span></summary><pre>${v.d}</pre></details>`;
}

/** An error as one line: its name once (a Python failure's message already starts with it). @param {any} err @param {string} [fallback] */
function errText(err, fallback = 'Error') {
  const name = err?.name ?? fallback;
  const message = String(err?.message ?? '').split('\n')[0];
  return message === name || message.startsWith(`${name}: `) ? message : `${name}: ${message}`;
}

/** An action's Python traceback, collapsed (`key`: its own, so a redraw keeps it open). @param {any} err @param {string} key */
function tracebackHtml(err, key) {
  if (!err?.traceback) return '';
  return h` <details class="jsbx-traceback" data-key="${key}"><summary>Python traceback</summary><pre>${err.traceback}</pre></details>`;
}

/** "2/5 done" of a plan's items. @param {unknown} plan */
function planDone(plan) {
  const items = Array.isArray(plan) ? plan : [];
  return `${items.filter((it) => it && typeof it === 'object' && it.done).length}/${items.length} done`;
}

/** @param {Row} r */
function rowMain(r) {
  switch (r.k) {
    case 'group': {
      const parts = [r.each != null ? `${secs(r.each)} each` : '',
        r.failed ? `${count(r.failed)} failed` : r.open ? `${count(r.open)} open` : 'all ok'].filter(Boolean);
      return h`<b>${r.name}</b> × ${count(r.count)} <span class="jsbx-meta">· ${parts.join(' · ')}</span>`;
    }
    case 'call': {
      const status = r.ok === false ? h`<span class="jsbx-pill jsbx-pill-fail">failed</span> <span class="jsbx-errtext">${errText(r.err)}</span>`
        : r.ok ? h`<span class="jsbx-pill jsbx-pill-ok">ok</span>` : r.interrupt ? h`<span class="jsbx-pill jsbx-pill-wait">${r.answer ? 'answered' : 'waiting'}</span>` : h`<span class="jsbx-meta">running</span>`;
      const meta = [secs(r.took), r.waited ? `waited ${secs(r.waited)} for an answer` : ''].filter(Boolean).join(' · ');
      return h`<b>${r.name}</b> ${status} ${value('in', r.in)} ${value('→', r.out)} <span class="jsbx-meta">${meta}</span>${r.ok === false ? tracebackHtml(r.err, `traceback-${r.seq}`) : ''}`;
    }
    case 'console': return h`<span class="jsbx-pill jsbx-pill-level-${r.level}">${r.level}</span> <span class="jsbx-msg">${r.msg}</span>`;
    case 'step': return h`step <b>${r.name}</b> ${r.phase}${r.outcome ? ` · ${r.outcome}` : ''}`;
    case 'error': case 'mismatch':
      if (r.in_cell) return h`<span class="jsbx-meta">the run failed here: its error is shown below the cell</span>`;
      return h`<span class="jsbx-errtext">${errText(r.err, r.k)}</span>`;
    case 'plan': return h`plan <span class="jsbx-meta">${planDone(r.plan)}</span>`;
    case 'chain': return h`<span class="jsbx-meta">${r.i ? 'continued as' : 'run'}</span> <code>${r.name}</code>`;
    case 'omitted': return h`<span class="jsbx-meta">… ${plural(r.count, 'row', 'rows')} left out here: “show the full journal” fetches them</span>`;
    default: return h`${r.k} ${value('', r.in)}`;
  }
}

/** @param {Row} r @param {string} [style] */
function rowHtml(r, style) {
  const seq = r.seq >= 0 ? (r.last != null && r.last !== r.seq ? `#${r.seq}–${r.last}` : `#${r.seq}`) : '';
  return h`<div class="jsbx-row jsbx-row-${r.k}" data-seq="${r.seq}"${style ? new Safe(` style="${style}"`) : ''}><span class="jsbx-seq">${seq}</span><span class="jsbx-kind">${r.k === 'group' ? 'calls' : r.k}</span><span class="jsbx-main">${rowMain(r)}</span></div>`;
}

/** @param {Row[]} rows @param {boolean} windowed */
function rowsHtml(rows, windowed) {
  if (!rows.length) return h`<p class="jsbx-meta">no entries</p>`;
  if (!windowed || rows.length < WINDOW_FROM) return h`<div class="jsbx-rows">${rows.map((r) => rowHtml(r))}</div>`;
  // The live view fills this window as it scrolls (mountCard); the first screen is drawn now.
  return h`<div class="jsbx-rows jsbx-window" data-rows="${rows.length}" style="height:${VISIBLE * ROW_HEIGHT}px"><div class="jsbx-spacer" style="height:${rows.length * ROW_HEIGHT}px">${rows.slice(0, VISIBLE + 6).map((r, i) => rowHtml(r, `top:${i * ROW_HEIGHT}px`))}</div></div>`;
}

/** @param {Doc} doc @param {Row[]} rows @param {boolean} windowed */
function timeline(doc, rows, windowed) {
  const attempts = doc.attempts ?? [];
  const latest = attempts.length ? attempts[attempts.length - 1].n : 1;
  const earlier = rows.filter((r) => r.a && r.a < latest);
  const now = rows.filter((r) => !(r.a && r.a < latest));
  const summary = attempts.slice(0, -1).map((/** @type {any} */ a) => `attempt ${a.n} ${a.outcome ?? ''} ${secs((a.ended ?? NaN) - (a.started ?? NaN))}`.trim()).join(' · ');
  const head = h`<summary>Timeline <span class="jsbx-meta">${plural(doc.entries ?? 0, 'entry', 'entries')}${doc.omitted ? ` · ${count(doc.omitted)} rows not carried` : ''}</span></summary>`;
  return h`<details class="jsbx-card-timeline" data-key="timeline"${doc.status === 'failed' || (doc.entries ?? 0) <= 40 ? new Safe(' open') : ''}>${head}${earlier.length ? h`<details class="jsbx-earlier" data-key="earlier"><summary>${summary || 'earlier attempts'} <span class="jsbx-meta">(${plural(earlier.length, 'row', 'rows')})</span></summary>${rowsHtml(earlier, windowed)}</details>` : ''}${latest > 1 ? h`<div class="jsbx-meta">attempt ${latest}${attempts[attempts.length - 1]?.outcome ? ` · ${attempts[attempts.length - 1].outcome}` : ''}</div>` : ''}${rowsHtml(now, windowed)}<button class="jsbx-btn jsbx-journal" data-act="journal" type="button">show the full journal</button></details>`;
}

/** @param {Doc} doc @param {Record<string, any>} e */
function errorHtml(doc, e) {
  if (e.recorded || e.attempted) return new Safe(mismatchHtml(e, doc.source));
  // A message may carry its own excerpt (a limit's: "fuel-exhausted: …\n   2 | while (true) {}"): the title
  // takes its first line, the block under it the excerpt (ours from the source, else the message's own lines).
  const [first, ...more] = String(e.message ?? '').split('\n');
  const ex = e.source_line || excerpt(doc.source, e.line, e.column) || more.join('\n').replace(/^\n+|\s+$/g, '');
  const where = e.line ? h` <span class="jsbx-where">line ${e.line}${e.column ? `:${e.column}` : ''}</span>` : '';
  return h`<div class="jsbx-error"><div class="jsbx-err-title">${e.limit ? h`<span class="jsbx-pill jsbx-pill-limit">${e.limit}</span> ` : ''}${e.name || 'Error'}: ${first}${where}</div>${ex ? h`<pre class="jsbx-source" data-role="excerpt">${ex}</pre>` : ''}${tracebackHtml(e, 'traceback')}</div>`;
}

/** Rows for the edit box: the whole value, up to a screenful. @param {unknown} text */
export const editRows = (text) => Math.min(Math.max(String(text ?? '').split('\n').length + 1, 3), 20);

export const INPUT_LINES = 12; // lines of an approval's input shown at once; the rest behind an expander

/** An approval's input as formatted JSON: its first lines, the others behind an expander. @param {any} input @param {string} key */
function inputHtml(input, key) {
  if (!input || typeof input.text !== 'string') return '';
  const lines = input.text.split('\n');
  const rest = lines.slice(INPUT_LINES);
  return h`<div class="jsbx-input" data-role="input"><span class="jsbx-meta">input</span><pre>${lines.slice(0, INPUT_LINES).join('\n')}</pre>${rest.length ? h`<details class="jsbx-more" data-key="${key}"><summary>${plural(rest.length, 'more line', 'more lines')}${input.cut ? ` (cut at ${count(input.cut)} chars)` : ''}</summary><pre>${rest.join('\n')}</pre></details>` : ''}</div>`;
}

/** How to answer without a live card (a static page, a kernel without the extension). @param {Record<string, any>} p @param {string} run */
function answerHow(p, run) {
  const answer = p.approval ? '--answer true' : '--answer JSON';
  return h`<div class="jsbx-meta jsbx-how" data-role="how">or answer from a cell: <code>%sandbox resume ${run} --id ${p.id} ${answer}</code> (or <code>--reject REASON</code>)</div>`;
}

/** @param {Record<string, any>} p @param {boolean} live @param {string} [how] the run to name in how to answer otherwise ('': say nothing) */
function pendingHtml(p, live, how = '') {
  const off = live ? '' : new Safe(' disabled');
  const about = p.tool ? h` <span class="jsbx-meta">MCP tool <code>${p.tool}</code>${p.server ? h` of <code>${p.server}</code>` : ''}${(p.hints ?? []).length ? ` · ${p.hints.join(', ')}` : ''}</span>` : '';
  return h`<div class="jsbx-pending" data-interrupt="${p.id}"><div><b>${p.name}</b> ${p.approval ? 'needs approval' : 'needs an answer'}${about} <span class="jsbx-meta">interrupt <code>${p.id}</code></span></div>${p.html ? h`<div class="jsbx-preview">${new Safe(String(p.html))}</div>` : ''}${p.input ? inputHtml(p.input, `input-${p.id}`) : value('data', p.data)}<div class="jsbx-buttons"><button class="jsbx-btn jsbx-approve" data-act="approve" type="button"${off}>Approve</button> <button class="jsbx-btn jsbx-reject" data-act="reject" type="button"${off}>Reject</button> <input class="jsbx-reason" data-key="reason-${p.id}" placeholder="reason (optional)"${off}></div><details class="jsbx-edit" data-key="edit-${p.id}"><summary>edit the ${p.approval ? 'input' : 'answer'}</summary><textarea class="jsbx-edited" rows="${editRows(p.edit)}" data-key="edited-${p.id}"${off}>${p.edit}</textarea><button class="jsbx-btn" data-act="edit" type="button"${off}>${p.approval ? 'Edit & approve' : 'Send edited'}</button></details><div class="jsbx-note" data-role="message"></div>${how ? answerHow(p, how) : ''}</div>`;
}

/** Who answered, how and when: " by ada via card, 19:03". @param {Record<string, any>} a */
const answeredBy = (a) => `${a.by ? ` by ${a.by}` : ''}${a.via ? ` via ${a.via}` : ''}${a.when ? `, ${a.when}` : ''}`;

/** A question (an interrupt that is no approval) and its answer. @param {Record<string, any>} a */
function answeredQuestion(a) {
  return h`<div class="jsbx-answered jsbx-answered-question" data-interrupt="${a.id}" data-role="question">? <b>${a.name}</b> answered${answeredBy(a)} ${value('asked', a.question)} ${value('answer', a.value)}</div>`;
}

/** The script the run ran, numbered, its failing line marked: for a run whose script no cell shows (a model's).
 * @param {Doc} d */
function scriptHtml(d) {
  if (!d.show_script || !d.source) return '';
  const lines = String(d.source).replace(/\s+$/, '').split(/\r\n|\r|\n/);
  const bad = d.error?.line;
  const width = String(lines.length).length;
  const body = lines.map((text, i) => h`<span class="jsbx-script-line"${i + 1 === bad ? new Safe(' data-error="true"') : ''}><span class="jsbx-ln">${String(i + 1).padStart(width)}</span> ${text}</span>`);
  return h`<details class="jsbx-script" data-key="script" data-role="script"><summary>script <span class="jsbx-meta">${plural(lines.length, 'line', 'lines')}${bad ? ` · fails at line ${bad}` : ''}</span></summary><pre>${body}</pre></details>`;
}

/**
 * The whole card as HTML. `options.live`: buttons enabled (a kernel is attached);
 * `options.hint`: why they are not ('' while a kernel has yet to answer); `options.retry`: the hint offers
 * to ask the kernel again; `options.windowed`: long row lists as a window.
 * @param {Doc} doc @param {{live?: boolean, hint?: string, retry?: boolean, windowed?: boolean}} [options]
 */
export function cardHtml(doc, options = {}) {
  const d = doc ?? {};
  const status = d.status ?? 'unknown';
  const attempts = d.attempts ?? [];
  const facts = [plural(attempts.length, 'attempt', 'attempts'), d.chain?.length > 1 ? `chain of ${d.chain.length} runs` : '', d.store ? `store ${d.store}` : ''].filter(Boolean).join(' · ');
  const live = Boolean(options.live);
  const clickable = d.pending?.length || status === 'failed' || status === 'cancelled'; // answers, Resume, Roll back
  const hint = live || !clickable ? '' : (options.hint ?? NOT_LOADED); // only where a click would do something
  const retry = hint && options.retry ? h` <button class="jsbx-btn jsbx-retry" data-act="connect" type="button">try again</button>` : '';
  const errorShown = d.error && !(d.error_in_cell != null && d.error_in_cell === attempts[attempts.length - 1]?.n);
  const answered = (d.answered ?? []).map((/** @type {any} */ a) => a.question ? answeredQuestion(a) : h`<div class="jsbx-answered" data-interrupt="${a.id}">${a.approved ? '✓' : '✗'} <b>${a.name}</b> ${a.approved ? 'approved' : 'rejected'}${answeredBy(a)}${a.reason ? h`: ${a.reason}` : ''} ${a.ran ? h`${value('proposed', a.input)} ${value('ran with', a.ran)}${(a.changes ?? []).length ? h`<ul class="jsbx-changes" data-role="changes">${a.changes.map((/** @type {string} */ c) => h`<li><code>${c}</code></li>`)}</ul>` : ''}` : value('input', a.input)} ${value('answer', a.value)}</div>`);
  const out = [
    h`<div class="jsbx-card-head"><span class="jsbx-status" data-status="${status}">${status}</span> <b>${d.name || d.title || 'run'}</b> <code>${d.run_id}</code> <span class="jsbx-meta">${facts}</span>${hint ? h` <span class="jsbx-hint" data-role="hint">${hint}${retry}</span>` : ''}</div>`,
    status === 'running' && (d.progress || d.step) ? h`<div class="jsbx-live-now" data-role="progress">${d.step ? h`<div class="jsbx-meta">step <b>${d.step}</b></div>` : ''}${d.progress ? new Safe(String(progressHtml(d.progress))) : ''}</div>` : '',
    d.notice ? h`<div class="jsbx-error" data-role="notice"><div class="jsbx-err-title">the click did not go through: ${d.notice}</div></div>` : '',
    d.output ? h`<div class="jsbx-output">${value('output', d.output)}${d.out_var ? h` <span class="jsbx-meta">(in <code>${d.out_var}</code>)</span>` : ''}</div>` : '',
    errorShown ? errorHtml(d, d.error) : d.error ? h`<div class="jsbx-meta">the error is shown below the cell${tracebackHtml(d.error, 'traceback')}</div>` : '',
    scriptHtml(d),
    status === 'cancelled' ? h`<div class="jsbx-buttons" data-role="resume"><button class="jsbx-btn jsbx-resume" data-act="resume" type="button"${live ? '' : new Safe(' disabled')}>Resume</button> <span class="jsbx-meta">go on from where it stopped: the journal is replayed, nothing recorded runs twice</span></div>` : '',
    status === 'failed' || status === 'cancelled' ? h`<div class="jsbx-buttons" data-role="rollback"><button class="jsbx-btn jsbx-rollback" data-act="rollback" type="button"${live ? '' : new Safe(' disabled')}>Roll back</button> <span class="jsbx-meta">run the reverts of its completed calls, newest first</span></div>` : '',
    status === 'parked' ? h`<div class="jsbx-note">parked: ${d.wake_at ? `wakes at ${new Date(d.wake_at).toISOString()}` : 'waiting for an event'}; the store's scheduler resumes it, in any kernel on this store</div>` : '',
    Array.isArray(d.plan) ? h`<div class="jsbx-plan-box" data-role="plan"><b>Plan</b> <span class="jsbx-meta">${planDone(d.plan)}</span>${new Safe(String(planList(d.plan)))}</div>` : '',
    answered,
    (d.pending ?? []).map((/** @type {any} */ p) => pendingHtml(p, live, hint ? (d.chain?.length ? d.chain[d.chain.length - 1] : d.run_id) : '')),
    d.console?.length ? h`<details class="jsbx-console" data-key="console" open><summary>console <span class="jsbx-meta">${d.console_total > d.console.length ? `last ${d.console.length} of ${count(d.console_total)} lines` : plural(d.console.length, 'line', 'lines')}</span></summary><pre>${d.console.map((/** @type {any} */ c) => h`<span class="jsbx-c-${c.level}">${c.msg}</span>\n`)}</pre></details>` : '',
    d.rows ? timeline(d, d.rows, Boolean(options.windowed)) : '',
  ];
  return h`<div class="jsbx-host jsbx-card" data-run="${d.run_id}" data-status="${status}" data-version="${d.version}">${out}</div>`.s;
}

/** Fill a windowed row list with the rows under its scroll position. @param {HTMLElement} box @param {Row[]} rows */
function fillWindow(box, rows) {
  const first = Math.max(Math.floor(box.scrollTop / ROW_HEIGHT) - 4, 0);
  const last = Math.min(first + VISIBLE + 8, rows.length);
  const spacer = /** @type {HTMLElement} */ (box.firstElementChild);
  spacer.innerHTML = rows.slice(first, last).map((r, i) => rowHtml(r, `top:${(first + i) * ROW_HEIGHT}px`).s).join('');
}

/**
 * What the user typed in the card's keyed fields (the edit box, a rejection's reason), its focus and caret:
 * a redraw replaces the card's nodes, and this puts them back into the new fields of the same key.
 * Only a field whose value the user changed is restored (an untouched one shows the new document's).
 * @param {HTMLElement} node @returns {() => void} the restore, to call after the redraw
 */
function keepFields(node) {
  /** @type {Map<string, string>} */
  const values = new Map();
  for (const f of /** @type {NodeListOf<HTMLInputElement | HTMLTextAreaElement>} */ (node.querySelectorAll('input[data-key], textarea[data-key]'))) {
    if (f.value !== f.defaultValue) values.set(f.getAttribute('data-key') ?? '', f.value);
  }
  const active = /** @type {HTMLInputElement | HTMLTextAreaElement | null} */ (node.ownerDocument?.activeElement ?? null);
  const focused = active && node.contains(active) && active.hasAttribute('data-key')
    ? { key: active.getAttribute('data-key'), start: active.selectionStart, end: active.selectionEnd, dir: active.selectionDirection, top: active.scrollTop }
    : null;
  return () => {
    for (const f of /** @type {NodeListOf<HTMLInputElement | HTMLTextAreaElement>} */ (node.querySelectorAll('input[data-key], textarea[data-key]'))) {
      const key = f.getAttribute('data-key') ?? '';
      const value = values.get(key);
      if (value !== undefined) f.value = value;
      if (focused && key === focused.key && !f.disabled) {
        f.focus({ preventScroll: true });
        if (focused.start != null && focused.end != null) f.setSelectionRange(focused.start, focused.end, focused.dir ?? undefined);
        f.scrollTop = focused.top;
      }
    }
  };
}

/**
 * Render `doc` into `node` and wire it: `send(msg)` is the kernel (null: not attached); `retry()`, if
 * given, asks the kernel again (the hint's "try again").
 * Returns a function that re-renders with a newer document or another connection state.
 * @param {HTMLElement} node @param {Doc} doc @param {Conn} conn
 */
export function mountCard(node, doc, conn) {
  /** @type {Map<string, boolean>} */
  const open = new Map();
  let current = doc;
  let journal = /** @type {Row[] | null} */ (null);
  const draw = () => {
    for (const d of node.querySelectorAll('details[data-key]')) open.set(d.getAttribute('data-key') ?? '', /** @type {HTMLDetailsElement} */ (d).open);
    const typed = keepFields(node);
    const shown = journal ? { ...current, rows: journal, omitted: 0 } : current;
    node.innerHTML = cardHtml(shown, { live: Boolean(conn.send), hint: conn.hint, retry: Boolean(conn.retry), windowed: true });
    for (const d of node.querySelectorAll('details[data-key]')) {
      const was = open.get(d.getAttribute('data-key') ?? '');
      if (was !== undefined) /** @type {HTMLDetailsElement} */ (d).open = was;
    }
    typed();
    const attempts = shown.attempts ?? [];
    const latest = attempts.length ? attempts[attempts.length - 1].n : 1;
    const lists = [...node.querySelectorAll('.jsbx-window')];
    const earlierRows = (shown.rows ?? []).filter((/** @type {Row} */ r) => r.a && r.a < latest);
    const nowRows = (shown.rows ?? []).filter((/** @type {Row} */ r) => !(r.a && r.a < latest));
    for (const box of lists) {
      const rows = box.closest('.jsbx-earlier') ? earlierRows : nowRows;
      box.addEventListener('scroll', () => fillWindow(/** @type {HTMLElement} */ (box), rows), { passive: true });
    }
  };
  node.addEventListener('click', (ev) => {
    const button = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (ev.target).closest('[data-act]'));
    const act = button?.getAttribute('data-act');
    if (act === 'connect' && conn.retry) { conn.retry(); return; }
    if (!button || !conn.send) return;
    if (act === 'journal') { conn.send({ type: 'journal' }); button.textContent = 'loading…'; return; }
    if (act === 'resume') { button.setAttribute('disabled', ''); button.textContent = 'resuming…'; conn.send({ type: 'resume' }); return; }
    if (act === 'rollback') { button.setAttribute('disabled', ''); button.textContent = 'rolling back…'; conn.send({ type: 'rollback' }); return; }
    const panel = /** @type {HTMLElement} */ (button.closest('[data-interrupt]'));
    const message = /** @type {HTMLElement} */ (panel.querySelector('[data-role="message"]'));
    /** @type {Record<string, any>} */
    const msg = { type: 'answer', interrupt_id: panel.getAttribute('data-interrupt'), choice: act };
    if (act === 'reject') msg.reason = /** @type {HTMLInputElement} */ (panel.querySelector('.jsbx-reason')).value.trim();
    if (act === 'edit') {
      try {
        msg.edited = JSON.parse(/** @type {HTMLTextAreaElement} */ (panel.querySelector('.jsbx-edited')).value);
      } catch (err) {
        message.textContent = `not valid JSON, nothing sent: ${err}`;
        return;
      }
    }
    for (const b of panel.querySelectorAll('button, input, textarea')) /** @type {HTMLButtonElement} */ (b).disabled = true;
    message.textContent = 'sending…';
    conn.send(msg);
  });
  draw();
  return {
    /** @param {Doc} next */
    update(next) { if ((next.version ?? 0) >= (current.version ?? 0)) { current = next; draw(); } },
    /** @param {Row[]} rows */
    showJournal(rows) { journal = rows; draw(); },
    /** @param {Conn} next */
    connect(next) { conn = next; draw(); },
    get version() { return current.version ?? 0; },
  };
}
