// The kinds of trigger in words, and what the trigger editor asks of each tracker kind (Linear,
// GitHub, GitHub reviews, Jira): its filter fields, its write-back marks, its secret and URL hints.

import type { TriggerFilter, TriggerKind, WriteBackMarks } from '../../src/core/api';

export const kindNames: Record<string, string> = { webhook: 'Webhook', linear: 'Linear', jira: 'Jira', github: 'GitHub', 'github-review': 'GitHub reviews' };

export interface FilterField {
  name: keyof TriggerFilter;
  label: string;
  hint: string;
  placeholder?: string;
  /** Comma-separated in the form, a list in the filter. */
  list?: boolean;
  /** A monospace textarea across the form (a query) instead of a one-line input. */
  multiline?: boolean;
}

/** What the editor asks of a trigger that reads a tracker's issues through an account. */
export interface ProviderForm {
  filter: FilterField[];
  /** What write-back sets when a run starts and ends: issue states (Linear, Jira) or labels (GitHub); absent: no write-back (GitHub reviews). */
  marks?: { name: 'states' | 'labels'; noun: string; hint: string };
  /** The account's service when it is not the kind itself (GitHub reviews use a GitHub account). */
  accountKind?: string;
  /** Follow-up runs per pull request (GitHub reviews): the maxFollowUps field. */
  followUps?: boolean;
  /** Under a webhook secret that is set. */
  secretHint: string;
  urlHint: string;
  /**
   * The secret is Factory's own, not the tracker's: prefilled at random (with Regenerate), and the
   * webhook URL carries it as ?token=, which is how the tracker proves itself (Jira).
   */
  tokenInUrl?: boolean;
}

const labelsFilter: FilterField = { name: 'labels', label: 'Labels', list: true, hint: 'Comma-separated: an issue with any of them. Empty: any labels.', placeholder: 'factory' };

/** The tracker kinds the editor offers. */
export const providerForms: Partial<Record<TriggerKind, ProviderForm>> = {
  linear: {
    filter: [
      { name: 'team', label: 'Team key', hint: 'The prefix of the team’s issue keys.', placeholder: 'ENG' },
      { name: 'states', label: 'States', list: true, placeholder: 'unstarted, started',
        hint: 'Comma-separated state types (triage, backlog, unstarted, started, completed, canceled) or state names. Empty: every state except completed, canceled and duplicate.' },
      labelsFilter,
      { name: 'assignee', label: 'Assignee', hint: '“me”, an email, “none” (unassigned), or empty for anyone.', placeholder: 'me' },
    ],
    marks: { name: 'states', noun: 'State', hint: 'The workflow state a run moves its issue to when it starts, succeeds and fails, such as In Progress. Empty: left alone.' },
    secretHint: 'Linear’s signing secret: a delivery without its signature is refused. Saved when you save.',
    urlHint: 'In Linear, Settings → API → Webhooks: paste this URL, choose Issue events, and copy Linear’s signing secret into the Webhook secret field above.',
  },
  github: {
    filter: [
      { name: 'repo', label: 'Repository', hint: 'owner/name; checked when you save.', placeholder: 'octo-org/website' },
      labelsFilter,
      { name: 'assignee', label: 'Assignee', hint: '“me” (the account’s login), a login, “none” (unassigned), or empty for anyone.', placeholder: 'me' },
    ],
    marks: { name: 'labels', noun: 'Label', hint: 'The label a run puts on its issue when it starts, succeeds and fails; the previous one is removed when the next is set. Empty: labels left alone.' },
    secretHint: 'GitHub signs each delivery with this secret (X-Hub-Signature-256): a delivery without a valid signature is refused. Saved when you save.',
    urlHint: 'In the repository, Settings → Webhooks → Add webhook: paste this URL, content type application/json, choose “Issues” events (and optionally “Issue comments”), and enter the secret above in GitHub’s Secret field.',
  },
  'github-review': {
    filter: [{ name: 'repo', label: 'Repository', hint: 'owner/name: the pull requests Factory opened there are watched; checked when you save.', placeholder: 'octo-org/website' }],
    accountKind: 'github',
    followUps: true,
    secretHint: 'GitHub signs each delivery with this secret (X-Hub-Signature-256): a delivery without a valid signature is refused. Saved when you save.',
    urlHint: 'In the repository, Settings → Webhooks → Add webhook: paste this URL, content type application/json, choose “Pull requests”, “Pull request reviews”, “Pull request review comments” and “Issue comments”, and enter the secret above in GitHub’s Secret field. A review by someone with write access starts a follow-up run on the pull request’s branch; so does a comment beginning with /factory.',
  },
  jira: {
    filter: [
      { name: 'query', label: 'Query', multiline: true, placeholder: 'project = ABC AND labels = agent AND statusCategory != Done',
        hint: 'JQL: the issues that start runs. Checked at Jira when you preview and save, and by every poll. Webhook events are checked only for the projects it names plainly (project = ABC, or project in (ABC, DEF), joined to the rest by AND); the rest of the query is not checked for them.' },
      { ...labelsFilter, hint: 'Comma-separated: an issue with any of them. Checked on webhook events too, since Jira’s webhooks are not checked against the query. Empty: any labels.' },
    ],
    marks: { name: 'states', noun: 'Transition', hint: 'A transition or status name, such as In Progress or Done: where a run moves its issue when it starts, succeeds and fails. Empty: left alone.' },
    secretHint: 'Jira proves itself with this secret: the webhook URL carries it as its token, so a delivery without it is refused. Jira admin webhooks can also sign with it (X-Hub-Signature). Saved when you save.',
    urlHint: 'In Jira, Settings → System → WebHooks (or a project automation “Send web request”): paste this URL, choose Issue created and Issue updated events; you may narrow it with JQL there. Jira admin webhooks can also sign with a secret (X-Hub-Signature): use the same secret.',
    tokenInUrl: true,
  },
};
export const editableKinds = ['webhook', ...Object.keys(providerForms)] as TriggerKind[];
export const markWords: Record<keyof WriteBackMarks, string> = { started: 'at start', succeeded: 'on success', failed: 'on failure' };
/** "Linear, GitHub, or Jira": the names of `kinds` as a list in words. */
export const kindList = (kinds: string[], type: 'conjunction' | 'disjunction'): string =>
  new Intl.ListFormat('en', { type }).format(kinds.map((kind) => kindNames[kind] ?? kind));
