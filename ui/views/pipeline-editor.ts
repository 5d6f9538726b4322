// The Pipeline screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const pipelineEditorScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Pipeline'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
