// What a trigger's ledger decision means (trigger-events.ts shows it): started (success), refused
// (danger: a delivery that failed its signature may be forged), error (danger), or ignored
// (neutral), from the engine's own words (src/triggers). Pure: no DOM.

type DecisionKind = 'started' | 'refused' | 'error' | 'ignored';

interface DecisionStatus {
  kind: DecisionKind;
  /** The status in one word or two, shown in the pill. */
  label: string;
  glyph: string;
  /** The rest of the decision in words (its run id left out: the Run column links the run). */
  detail: string;
}

/** The engine's words (src/triggers) that start each kind; anything else is neutral. */
const refusedPrefixes = ['invalid signature', 'refused', 'invalid:', 'dropped'];
const errorPrefixes = ['error', 'poll failed', 'reading the comments failed'];

/**
 * The status of a ledger decision such as 'started run_…', 'invalid signature', 'ignored: no
 * title', 'error: …'. A refused signature is named as a possible forgery.
 */
export function decisionStatus(decision: string, runId?: string): DecisionStatus {
  const text = runId ? decision.replace(runId, '').replace(/\s+/g, ' ').trim() : decision;
  const rest = (prefix: string) => text.slice(prefix.length).replace(/^[:\s]+/, '');
  if (/^started\b/.test(text)) return { kind: 'started', label: 'Started', glyph: '✓', detail: rest('started') };
  if (text.startsWith('invalid signature')) {
    return { kind: 'refused', label: 'Invalid signature', glyph: '⚠', detail: 'refused: not signed with this trigger’s secret — possibly forged, or the secret differs' };
  }
  const refused = refusedPrefixes.find((prefix) => text.startsWith(prefix));
  if (refused) return { kind: 'refused', label: 'Refused', glyph: '⚠', detail: refused === 'refused' ? rest(refused) : text };
  const error = errorPrefixes.find((prefix) => text.startsWith(prefix));
  if (error) return { kind: 'error', label: 'Error', glyph: '✕', detail: error === 'error' ? rest(error) : text };
  if (text.startsWith('ignored')) return { kind: 'ignored', label: 'Ignored', glyph: '–', detail: rest('ignored') };
  return { kind: 'ignored', label: 'No run', glyph: '–', detail: text };
}

/** `run_k3x9q2…` as `k3x9q2`: enough to tell runs apart in a column. */
export function shortRunId(runId: string): string {
  return runId.replace(/^run_/, '').slice(0, 8);
}
