// The Channels screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const channelsScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Channels'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
