// The Inbox screen.
import type { ScreenFactory } from '../app';
import { h } from '../dom';

export const inboxScreen: ScreenFactory = () => ({
  element: h('section', { class: 'page' }, h('h1', {}, 'Inbox'), h('p', { class: 'muted' }, 'This screen is being built.')),
});
