// Whether the coding agents a pipeline needs can run on this machine, said before a run fails:
// which agent each agent step uses, which of them is missing, why, and how to install it.

import type { HarnessDefinition, Pipeline, Snapshot } from '../../src/core/api';
import { h } from '../dom';

/** An agent that agent steps (`steps`: their names) would run with and that cannot run now; `install` is the command that installs it. */
interface MissingAgent {
  harnessId: string;
  name: string;
  steps: string[];
  reason: 'unknown' | 'disabled' | 'not installed';
  install?: string;
}

const reasonWords: Record<MissingAgent['reason'], string> = { unknown: 'is not a harness Factory knows', disabled: 'is switched off on Harnesses', 'not installed': 'is not installed here' };

/** The harness an agent step runs with, as the engine picks it: the step's, the pipeline's, the settings' default, else Claude Code. */
export function agentOf(step: { harnessId?: string }, pipeline: Pick<Pipeline, 'harnessId'>, snapshot: Snapshot | undefined): string {
  return step.harnessId || pipeline.harnessId || snapshot?.settings.defaultHarnessId || 'claude';
}

/** Why the harness cannot run; undefined when it can, or was not checked yet (nothing to say before a detection). */
function problemOf(harness: HarnessDefinition | undefined, snapshot: Snapshot): MissingAgent['reason'] | undefined {
  if (!harness) return 'unknown';
  if (!harness.enabled) return 'disabled';
  return snapshot.harnessStatus[harness.id]?.installed === false ? 'not installed' : undefined;
}

/** The agents the agent steps of `pipeline` would run with that cannot run now, one entry per harness; empty without a snapshot. */
export function missingAgents(pipeline: Pick<Pipeline, 'steps' | 'harnessId'>, snapshot: Snapshot | undefined): MissingAgent[] {
  const missing = new Map<string, MissingAgent>();
  for (const step of snapshot ? pipeline.steps : []) {
    if (step.kind !== 'agent') continue;
    const harnessId = agentOf(step, pipeline, snapshot);
    const harness = snapshot!.harnesses.find((candidate) => candidate.id === harnessId);
    const reason = problemOf(harness, snapshot!);
    if (!reason) continue;
    const entry = missing.get(harnessId) ?? { harnessId, name: harness?.name ?? harnessId, steps: [], reason, install: harness?.install };
    entry.steps.push(step.name || step.id);
    missing.set(harnessId, entry);
  }
  return [...missing.values()];
}

/** Why no agent can write (Generate): a line linking to Harnesses, `id` for the disabled Generate buttons to name; null when one is ready. */
export function noAgentNote(snapshot: Snapshot | undefined, id = 'no-agent'): HTMLElement | null {
  if (!snapshot || snapshot.harnesses.some((harness) => !problemOf(harness, snapshot))) return null;
  return h('p', { class: 'meta no-agent', id }, 'Generate needs a coding agent, and none is installed: install one on ', h('a', { href: '#/harnesses' }, 'Harnesses'), ' first.');
}

/**
 * A notice naming each missing agent, the steps that use it (or `subject`: "The Feature template
 * uses"), why, and the command that installs it; null when nothing is missing.
 */
export function missingAgentsNotice(missing: readonly MissingAgent[], subject?: string): HTMLElement | null {
  if (missing.length === 0) return null;
  const users = (agent: MissingAgent) => subject ?? `${agent.steps.length === 1 ? 'Step' : 'Steps'} ${agent.steps.map((name) => `“${name}”`).join(', ')} ${agent.steps.length === 1 ? 'uses' : 'use'}`;
  return h('div', { class: 'notice readiness', role: 'status', 'data-test': 'missing-agents' }, missing.map((agent) => {
    const install = agent.reason === 'not installed' && agent.install;
    return h('p', {}, `${users(agent)} ${agent.name}, which ${reasonWords[agent.reason]}. ${install ? 'Install it, then choose Detect again on ' : 'See '}`,
      h('a', { href: '#/harnesses' }, 'Harnesses'), install ? [':', h('code', {}, install)] : '.');
  }));
}
