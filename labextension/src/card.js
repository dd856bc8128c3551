// @ts-check
/**
 * The run card's renderer (application/vnd.jupyter-sandbox.run+json), as a
 * plugin rather than a bare mime extension: it must find its notebook's kernel
 * to make a card live. It draws the saved card at once (no kernel needed),
 * then, once attached, opens a comm to the kernel's `jupyter_sandbox.card`
 * target (registered by `%load_ext jupyter_sandbox`) with the run id; the
 * kernel answers with the run's current card and pushes a new one whenever
 * the run changes. If the target is missing (no `%load_ext` yet, or a kernel
 * just restarted) the kernel closes the comm; the card stays drawn, its
 * buttons disabled with a hint, and it tries again whenever the kernel goes
 * idle or restarts. No widget model is involved, so "model not found" cannot
 * happen.
 *
 * The kernel of a renderer: the main-area widget (a notebook panel in Lab and
 * Notebook 7) whose node contains the renderer's, through its sessionContext.
 * Found this way rather than through INotebookTracker: this needs no
 * @jupyterlab/notebook dependency and finds the same panel.
 */
import { Widget } from '@lumino/widgets';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { CARD_MIME, mountCard } from '../../jupyter_sandbox/notebook/widgets/static/card.js';

const TARGET = 'jupyter_sandbox.card';
const NOT_LOADED = 'run `%load_ext jupyter_sandbox` to make this card live';

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
  }

  /** @param {{data: Record<string, any>}} model */
  async renderModel(model) {
    const doc = model.data[CARD_MIME] ?? {};
    this.doc = doc;
    if (!this.card) this.card = mountCard(this.node, doc, { send: this.sender(), hint: NOT_LOADED });
    else this.card.update(doc);
    this.node.setAttribute('data-live', String(Boolean(this.comm)));
    if (this.isAttached) this.attach();
  }

  onAfterAttach() { this.attach(); }

  onBeforeDetach() { this.closeComm(); }

  dispose() { this.closeComm(); this.unwatch(); super.dispose(); }

  sender() { return this.comm ? (/** @type {any} */ msg) => { this.comm.send(msg); return true; } : null; }

  /** Find the kernel, and watch it: a card tries to attach whenever the kernel is idle. */
  attach() {
    const session = sessionOf(this.app, this.node);
    if (!session) {
      this.card?.connect({ send: null, hint: 'no kernel' });
      return;
    }
    if (session !== this.session) {
      this.unwatch();
      this.session = session;
      this.onStatus = () => {
        const status = session.session?.kernel?.status;
        if (status === 'restarting' || status === 'dead' || status === 'autorestarting') this.closeComm();
        if (status === 'idle' && !this.comm) this.connect();
      };
      session.statusChanged.connect(this.onStatus);
      this.onKernel = () => { this.closeComm(); this.connect(); };
      session.kernelChanged.connect(this.onKernel);
    }
    if (!this.comm) this.connect();
  }

  unwatch() {
    if (this.session) {
      this.session.statusChanged.disconnect(this.onStatus);
      this.session.kernelChanged.disconnect(this.onKernel);
    }
    this.session = null;
  }

  connect() {
    const kernel = this.session?.session?.kernel;
    const runId = this.doc?.run_id;
    if (!kernel || !runId || this.pending || this.comm || this.isDisposed) return;
    let comm;
    try {
      comm = kernel.createComm(TARGET);
    } catch {
      return; // a disposed kernel connection: the next status change retries
    }
    this.pending = comm; // until the kernel's first document (attached) or its close (no target)
    comm.onMsg = (/** @type {any} */ msg) => {
      const data = msg.content.data ?? {};
      if (this.pending === comm) {
        this.pending = null;
        this.comm = comm;
        this.node.setAttribute('data-live', 'true');
        this.card?.connect({ send: this.sender() });
      }
      if (data.type === 'doc') this.card?.update(data.doc);
      else if (data.type === 'journal') this.card?.showJournal(data.rows ?? []);
    };
    comm.onClose = () => {
      if (this.pending !== comm && this.comm !== comm) return;
      this.pending = null;
      this.comm = null;
      if (this.isDisposed) return;
      this.node.setAttribute('data-live', 'false');
      this.card?.connect({ send: null, hint: NOT_LOADED });
    };
    try {
      comm.open({ run_id: runId, store: this.doc?.store ?? null, title: this.doc?.title ?? null, out_var: this.doc?.out_var ?? null });
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
    if (!this.isDisposed) {
      this.node.setAttribute('data-live', 'false');
      this.card?.connect({ send: null, hint: NOT_LOADED });
    }
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
      defaultRank: 30, // ahead of its text/html fallback
      createRenderer: () => new CardRenderer(app)
    }, 30);
  }
};
