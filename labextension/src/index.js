// @ts-check
/**
 * JupyterLab 4 / Notebook 7 plugin: a cell whose first line is `%%sandbox`
 * is highlighted as JavaScript; every other cell keeps its own language.
 *
 * Lab has no public API mapping a cell magic to a language. Each editor gets
 * Lab's own JavaScript support (from IEditorLanguageRegistry) in a CodeMirror
 * Compartment at the highest precedence, so it outranks the cell's language
 * while present; a transactionExtender swaps it in or out as the first line
 * is typed or removed.
 */
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { cardPlugin } from './card.js';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';

const MAGIC = /^%%sandbox(?:\s|$)/;

/** Whether a cell's text makes it a sandbox cell. @param {string} text */
export const isSandboxCell = (text) => MAGIC.test(text);

/**
 * The CodeMirror extension for one editor.
 * @param {import('@codemirror/state').Extension} javascript Lab's JavaScript LanguageSupport
 * @param {string} initialText the editor's text when it is created
 * @returns {import('@codemirror/state').Extension}
 */
export function sandboxHighlighting(javascript, initialText) {
  const language = new Compartment();
  return [
    Prec.highest(language.of(isSandboxCell(initialText) ? javascript : [])),
    EditorState.transactionExtender.of((tr) => {
      if (!tr.docChanged) return null;
      const want = isSandboxCell(tr.newDoc.sliceString(0, 64));
      const has = language.get(tr.startState) === javascript;
      return want === has ? null : { effects: language.reconfigure(want ? javascript : []) };
    })
  ];
}

/** @type {import('@jupyterlab/application').JupyterFrontEndPlugin<void>} */
const highlighting = {
  id: 'jupyter-sandbox:highlighting',
  description: 'Highlights %%sandbox cells as JavaScript.',
  autoStart: true,
  requires: [IEditorExtensionRegistry, IEditorLanguageRegistry],
  activate: async (app, extensions, languages) => {
    // Loaded before registering, so the first editors already get it.
    const javascript = (await languages.getLanguage('javascript'))?.support;
    if (!javascript) {
      console.warn('jupyter-sandbox: no JavaScript language in this JupyterLab; %%sandbox cells stay unhighlighted');
      return;
    }
    extensions.addExtension({
      name: 'jupyter-sandbox:highlighting',
      factory: ({ model }) =>
        EditorExtensionRegistry.createImmutableExtension(
          sandboxHighlighting(javascript, model.sharedModel.getSource().slice(0, 64))
        )
    });
  }
};

export default [highlighting, cardPlugin];
