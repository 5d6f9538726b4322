// A trigger's recent events (its ledger): what each delivery or poll decided, first on the
// trigger's page. Each decision gets a status by meaning — started (success), refused (danger: a
// delivery that failed its signature may be forged), error (danger), ignored (neutral) — shown
// with a glyph and a word, never by colour alone; the run it started is a short link.

import type { LedgerEntry } from '../../src/core/api';
import type { AppContext } from '../app';
import { h, timeElement } from '../dom';
import { decisionStatus, shortRunId } from './decision-status';
import { errorElement } from './error-details';
import { runTitle } from './runs';

/** The table of a trigger's recent events, newest first as the engine keeps them. */
export function eventTable(context: AppContext, entries: LedgerEntry[]): HTMLElement {
  return h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Recent events' },
    h('table', { class: 'table events-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Source'), h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Decision'), h('th', { scope: 'col' }, 'Run'))),
      h('tbody', {}, entries.map((entry) => {
        const status = decisionStatus(entry.decision, entry.runId);
        const run = entry.runId ? context.state.snapshot?.runs.find((candidate) => candidate.id === entry.runId) : undefined;
        const title = run ? runTitle(run) : undefined;
        return h('tr', { class: `event event-${status.kind}`, 'data-decision': entry.decision },
          h('td', {}, timeElement(entry.at)),
          h('td', {}, entry.source),
          h('td', { class: 'mono key', title: entry.key }, entry.key ?? '—'),
          h('td', { class: `decision decision-${status.kind}`, title: entry.decision },
            h('span', { class: `event-status event-status-${status.kind}`, 'data-test': 'event-status' }, h('span', { 'aria-hidden': 'true' }, `${status.glyph} `), status.label),
            // An error's words, with its raw details (a long request URL) behind a disclosure.
            status.detail ? errorElement(status.detail, 'event-detail', ' ') : null),
          h('td', { class: 'run' }, entry.runId
            ? h('a', { href: `#/runs/${encodeURIComponent(entry.runId)}`, title: title ? `${title} (${entry.runId})` : entry.runId }, title ?? shortRunId(entry.runId))
            : '—'));
      }))));
}
