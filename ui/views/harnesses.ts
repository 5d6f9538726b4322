// The Harnesses screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const harnessesScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Harnesses'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
