// What a saved trigger has done, at the top of its editor (trigger-editor.ts): its polls and
// events, a rate limit and the last error, and its ledger of recent events (trigger-events.ts),
// the answer to "why did this not run?".

import type { TriggerState } from '../../src/core/api';
import type { AppContext } from '../app';
import { h, timeElement } from '../dom';
import { errorElement } from './error-details';
import { eventTable } from './trigger-events';

/** The trigger's state in one line; `polls`: a tracker trigger, which polls as well. */
export function stateSection(polls: boolean, state: TriggerState | undefined): HTMLElement {
  const limitedUntil = state?.rateLimitedUntil !== undefined && state.rateLimitedUntil > Date.now() ? state.rateLimitedUntil : undefined;
  // The poller's error for a rate limit already says until when (and the service's words): shown once, as the warning.
  const limitError = limitedUntil !== undefined && state?.lastError?.startsWith('Rate limited until ') ? state.lastError : undefined;
  return h('p', { class: 'meta trigger-state' },
    polls ? ['Last poll ', timeElement(state?.lastPollAt), ' · next poll ', timeElement(state?.nextPollAt), ' · last event '] : 'Last event ',
    timeElement(state?.lastEventAt), ` · ${state?.processedCount ?? 0} processed`,
    limitedUntil ? h('span', { class: 'warning' }, ` · ${limitError ?? `Rate limited until ${new Date(limitedUntil).toLocaleTimeString()}`}`) : null,
    state?.lastError && !limitError ? errorElement(state.lastError, 'item-error', ' · ✕ ') : null);
}

/** The recent events and what was decided for each. */
export function ledgerSection(context: AppContext, polls: boolean, state: TriggerState | undefined): HTMLElement {
  const entries = state?.ledger ?? [];
  const heading = h('h3', {}, 'Recent events');
  if (entries.length === 0) {
    return h('div', { class: 'ledger' }, heading, h('div', { class: 'empty' }, polls
      ? 'No events yet. Poll now, or wait for the next poll: each issue shows here with what was decided.'
      : 'No events yet. Send a request to the webhook URL: each one shows here with what was decided.'));
  }
  return h('div', { class: 'ledger' }, heading, eventTable(context, entries));
}
