// The Settings screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const settingsScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Settings'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
