// The Run screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const runScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Run'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
