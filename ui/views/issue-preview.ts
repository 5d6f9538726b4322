// One issue of a tracker trigger's preview ("Test"): its key (a link), title, state, labels and
// assignee, as the tracker holds them. State and assignee are read from the issue as the
// provider fetched it (`issue.raw`): Linear `state.name` and `assignee.name`, GitHub `state` and
// `assignees[].login`, Jira `fields.status.name` and `fields.assignee.displayName`.

import type { Issue } from '../../src/core/api';
import { externalLink, type AppContext } from '../app';
import { h } from '../dom';

const record = (value: unknown): Record<string, unknown> | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/** The issue's state and assignee as its tracker names them, when it says. */
function issueFacts(issue: Issue): { state?: string; assignee?: string } {
  const raw = record(issue.raw) ?? {};
  const fields = record(raw.fields);
  const state = text(record(raw.state)?.name) ?? text(raw.state) ?? text(record(fields?.status)?.name);
  const assignees = Array.isArray(raw.assignees) ? raw.assignees.map((person) => text(record(person)?.login)).filter((login): login is string => Boolean(login)) : [];
  const assignee = text(record(raw.assignee)?.name) ?? text(record(raw.assignee)?.displayName) ?? text(record(fields?.assignee)?.displayName)
    ?? (assignees.length ? assignees.join(', ') : text(record(raw.assignee)?.login));
  return { ...(state ? { state } : {}), ...(assignee ? { assignee } : {}) };
}

/** A row of the preview list. */
export function issuePreviewItem(context: AppContext, issue: Issue): HTMLElement {
  const { state, assignee } = issueFacts(issue);
  return h('li', { class: 'issue-preview', 'data-test': 'preview-issue' },
    h('span', { class: 'issue-preview-head' }, externalLink(context, issue.url, issue.key ?? 'Issue', 'mono'), ' ', h('span', { class: 'issue-preview-title' }, issue.title)),
    h('span', { class: 'meta issue-preview-facts' },
      state ? h('span', { class: 'tag', 'data-test': 'preview-state', title: 'State' }, state) : null,
      (issue.labels ?? []).map((label) => h('span', { class: 'tag tag-label', 'data-test': 'preview-label' }, label)),
      h('span', { 'data-test': 'preview-assignee' }, assignee ? `Assigned to ${assignee}` : 'Unassigned')));
}
