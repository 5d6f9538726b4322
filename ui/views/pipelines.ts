// The Pipelines screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const pipelinesScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Pipelines'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
