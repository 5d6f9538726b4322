// The Projects screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const projectsScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Projects'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
