// @ts-check
/**
 * MIME renderer for application/vnd.jupyter-sandbox.timeline+json: a run's
 * timeline in saved notebooks, without a kernel, in Lab and Notebook 7. It
 * renders with the widget's own code (timeline.js), bundled from the Python
 * package, so the two views cannot drift apart.
 */
import { Widget } from '@lumino/widgets';
import { TIMELINE_MIME, renderTimeline } from '../../jupyter_sandbox/notebook/widgets/static/timeline.js';

/** A Lumino widget implementing IRenderMime.IRenderer. */
class TimelineRenderer extends Widget {
  constructor() {
    super();
    this.addClass('jsbx-mime');
  }

  /** @param {{data: Record<string, any>}} model */
  async renderModel(model) {
    renderTimeline(model.data[TIMELINE_MIME] ?? {}, this.node, { live: false });
  }
}

/**
 * Safe in untrusted notebooks: every journal value is escaped and nothing runs.
 * Rank 40 puts it ahead of the text/html fallback (50) and behind the live
 * widget view.
 */
export const rendererFactory = {
  safe: true,
  mimeTypes: [TIMELINE_MIME],
  defaultRank: 40,
  createRenderer: () => new TimelineRenderer()
};

/** @type {import('@jupyterlab/rendermime-interfaces').IRenderMime.IExtension} */
const extension = {
  id: 'jupyter-sandbox:timeline',
  description: 'Renders jupyter_sandbox run timelines.',
  rendererFactory,
  rank: 40,
  dataType: 'json'
};

export default extension;
