// The Triggers screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const triggersScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Triggers'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
