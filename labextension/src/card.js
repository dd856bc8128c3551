// @ts-check
/**
 * The run card's renderer (application/vnd.jupyter-sandbox.run+json), as a
 * plugin rather than a bare mime extension: it must find its notebook's kernel
 * to make a card live. It draws the saved card at once (no kernel needed),
 * then, once attached, opens a comm to the kernel's `jupyter_sandbox.card`
 * target (registered by `%load_ext jupyter_sandbox`) with the run id and its
 * store; the kernel answers with the run's current card and pushes a new one
 * whenever the run changes. No widget model is involved, so "model not found"
 * cannot happen.
 *
 * Quiet until asked: a card asks a kernel once per kernel start (and restart).
 * If the target is missing the kernel closes the comm; the card stays drawn,
 * its buttons disabled with a hint and a "try again" button, and asks again
 * only on that click or when the kernel announces `%load_ext` (a comm the
 * kernel opens to `jupyter_sandbox.ready`), never on a timer or on every idle.
 * While the kernel has yet to answer (it is running the card's own cell) the
 * card shows no hint.
 *
 * The kernel of a renderer: the main-area widget (a notebook panel in Lab and
 * Notebook 7) whose node contains the renderer's, through its sessionContext.
 * Found this way rather than through INotebookTracker: this needs no
 * @jupyterlab/notebook dependency and finds the same panel.
 */
import { Widget } from '@lumino/widgets';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { CARD_MIME, NOT_LOADED, mountCard } from '../../jupyter_sandbox/notebook/widgets/static/card.js';

const TARGET = 'jupyter_sandbox.card';
const READY = 'jupyter_sandbox.ready';
const CARD_RANK = -20; // see activate

/** Every card renderer alive, so a kernel's `%load_ext` announcement reaches those it refused. */
const renderers = new Set();
/** Kernel connections whose READY target is registered. */
const announcing = new WeakSet();

/** @param {any} kernel */
function hearLoads(kernel) {
  if (!kernel || announcing.has(kernel)) return;
  announcing.add(kernel);
  try {
    kernel.registerCommTarget(READY, (/** @type {any} */ comm) => {
      for (const r of renderers) if (r.session?.session?.kernel === kernel) r.ask();
      try { comm.close(); } catch { /* the kernel closed it first */ }
    });
  } catch { /* a disposed connection */ }
}

/** @param {any} app @param {HTMLElement} node */
function sessionOf(app, node) {
  const shell = app?.shell;
  if (!shell?.widgets) return null;
  for (const area of ['main', 'right', 'left', 'down']) {
    let widgets;
    try { widgets = shell.widgets(area); } catch { continue; }
    for (const w of widgets) if (w?.sessionContext && w.node?.contains(node)) return w.sessionContext;
  }
  return null;
}

class CardRenderer extends Widget {
  /** @param {any} app */
  constructor(app) {
    super();
    this.app = app;
    this.addClass('jsbx-mime');
    /** @type {any} */ this.card = null;
    /** @type {any} */ this.doc = null;
    /** @type {any} */ this.comm = null;
    /** @type {any} */ this.session = null;
    /** @type {any} */ this.pending = null;
    /** @type {any} */ this.asked = null; // the kernel connection this card has asked (once per kernel start)
    /** @type {string} */ this.hint = ''; // '' until a kernel refuses
    renderers.add(this);
  }

  /** @param {{data: Record<string, any>}} model */
  async renderModel(model) {
    const doc = model.data[CARD_MIME] ?? {};
    this.doc = doc;
    if (!this.card) this.card = mountCard(this.node, doc, this.conn());
    else this.card.update(doc);
    this.node.setAttribute('data-live', String(Boolean(this.comm)));
    if (this.isAttached) this.attach();
  }

  onAfterAttach() { this.attach(); }

  onBeforeDetach() {
    if (this.comm || this.pending) { this.closeComm(); this.asked = null; } // attached again: ask again
  }

  dispose() { renderers.delete(this); this.closeComm(); this.unwatch(); super.dispose(); }

  /** What the card's buttons talk to now. */
  conn() {
    if (this.comm) return { send: (/** @type {any} */ msg) => { this.comm.send(msg); return true; } };
    return { send: null, hint: this.hint, retry: this.hint === NOT_LOADED ? () => this.ask() : null };
  }

  /** @param {string} hint */
  showState(hint) {
    this.hint = hint;
    if (!this.isDisposed) {
      this.node.setAttribute('data-live', String(Boolean(this.comm)));
      this.card?.connect(this.conn());
    }
  }

  /** Find the kernel and watch its restarts; ask it once. */
  attach() {
    const session = sessionOf(this.app, this.node);
    if (!session) {
      this.showState('no kernel');
      return;
    }
    if (session !== this.session) {
      this.unwatch();
      this.session = session;
      this.onStatus = () => {
        const status = session.session?.kernel?.status;
        if (status === 'restarting' || status === 'dead' || status === 'autorestarting') {
          this.closeComm();
          this.asked = null; // a new kernel start: ask once more when it is idle
        }
        if (status === 'idle') this.connect();
      };
      session.statusChanged.connect(this.onStatus);
      this.onKernel = () => { this.closeComm(); this.asked = null; this.connect(); };
      session.kernelChanged.connect(this.onKernel);
    }
    this.connect();
  }

  unwatch() {
    if (this.session) {
      this.session.statusChanged.disconnect(this.onStatus);
      this.session.kernelChanged.disconnect(this.onKernel);
    }
    this.session = null;
  }

  /** Ask again (a click on "try again", or the kernel announcing `%load_ext`). */
  ask() {
    if (this.comm || this.pending) return;
    this.asked = null;
    this.connect();
  }

  connect() {
    const kernel = this.session?.session?.kernel;
    const runId = this.doc?.run_id;
    if (!kernel || !runId || this.pending || this.comm || this.isDisposed || this.asked === kernel) return;
    hearLoads(kernel);
    let comm;
    try {
      comm = kernel.createComm(TARGET);
    } catch {
      return; // a disposed kernel connection: its successor asks
    }
    this.asked = kernel;
    this.pending = comm; // until the kernel's first document (attached) or its close (no target)
    this.showState('');
    comm.onMsg = (/** @type {any} */ msg) => {
      const data = msg.content.data ?? {};
      if (this.pending === comm) {
        this.pending = null;
        this.comm = comm;
        this.showState('');
      }
      if (data.type === 'doc') this.card?.update(data.doc);
      else if (data.type === 'journal') this.card?.showJournal(data.rows ?? []);
    };
    comm.onClose = () => {
      if (this.pending !== comm && this.comm !== comm) return;
      this.pending = null;
      this.comm = null;
      this.showState(NOT_LOADED);
    };
    try {
      comm.open({ run_id: runId, store: this.doc?.store ?? null, title: this.doc?.title ?? null, out_var: this.doc?.out_var ?? null, card: this.doc?.card ?? null });
    } catch {
      this.pending = null;
    }
  }

  closeComm() {
    const comm = this.comm;
    this.comm = null;
    this.pending = null;
    if (comm && !comm.isDisposed) {
      try { comm.close(); } catch { /* the kernel is gone */ }
    }
    this.showState(NOT_LOADED);
  }
}

/** @type {import('@jupyterlab/application').JupyterFrontEndPlugin<void>} */
export const cardPlugin = {
  id: 'jupyter-sandbox:card',
  description: 'Renders jupyter_sandbox run cards, live when the kernel has %load_ext jupyter_sandbox.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  activate: (app, rendermime) => {
    rendermime.addFactory({
      safe: true, // every journal value is escaped; an action's own preview HTML is the only markup
      mimeTypes: [CARD_MIME],
      // Lower ranks win. A card's bundle also carries an ipywidgets view (for frontends without this
      // extension), which @jupyter-widgets/jupyterlab-manager registers at -10 in every notebook:
      // ranked ahead of it (and of text/html at 50), this renderer is the one a trusted output picks.
      // An untrusted output picks only safe renderers, and the widget view is not one.
      defaultRank: CARD_RANK,
      createRenderer: () => new CardRenderer(app)
    }, CARD_RANK);
  }
};
