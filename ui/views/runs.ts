// The Runs screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const runsScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Runs'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
