// @ts-check
/**
 * The run card as an anywidget view, for frontends that render ipywidgets but
 * not our JupyterLab extension (VS Code, Colab, Lab with the extension off).
 * It is the card's own renderer (card.js) with the widget's model as its
 * connection: the synced `doc` is the card document, a click is a custom
 * message to the kernel (the same messages the extension's comm carries), and
 * "show the full journal" comes back as a custom message.
 *
 * notebook/card_widget.py loads this file joined with card.js and timeline.js
 * into one module (anywidget resolves no relative import).
 */
import { mountCard } from './card.js';

export default {
  /** @param {{model: any, el: HTMLElement}} ctx */
  render({ model, el }) {
    el.classList.add('jsbx-widget');
    const card = mountCard(el, model.get('doc') ?? {}, { send: (/** @type {any} */ msg) => { model.send(msg); return true; } });
    const onDoc = () => card.update(model.get('doc') ?? {});
    /** @param {any} msg */
    const onMsg = (msg) => { if (msg?.type === 'journal') card.showJournal(msg.rows ?? []); };
    model.on('change:doc', onDoc);
    model.on('msg:custom', onMsg);
    return () => {
      model.off('change:doc', onDoc);
      model.off('msg:custom', onMsg);
    };
  },
};
