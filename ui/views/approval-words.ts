// How an approval's decision is said in words, on the run page and in the Inbox: which options it
// chose and who decided where. Pure: no DOM, so tests read it directly.

import type { ApprovalChoices, ApprovalDecider } from '../../src/core/api';

const surfaces: Record<ApprovalDecider['via'], string> = { app: 'Factory', github: 'GitHub', linear: 'Linear', jira: 'Jira', telegram: 'Telegram' };

/** Who decided an approval and where, in words: "Ada Lovelace via Telegram"; the app's own decisions are "you". */
export function decidedBy(by: ApprovalDecider): string {
  return by.via === 'app' ? 'you' : `${by.name} via ${surfaces[by.via] ?? by.via}`;
}

/**
 * The labels of the options an approval chose, in order. Option ids are "1", "2", … (spec
 * `approveStep`): id "2" is the second label, `options[1]`. An id without a label is shown as such.
 */
export function optionLabels(choices: ApprovalChoices | undefined, selected: readonly string[] | undefined): string[] {
  return (selected ?? []).map((id) => choices?.options[Number(id) - 1] ?? `option ${id}`);
}
