// What the run's tracker comment says of a step's liveness and of what agents used (issue 24.4,
// 24.5), in Factory's own words: "rate limited, resumes 14:05 UTC", "stalled: no output for 12 min",
// "Used 41.2k tokens · $0.62". Times are this machine's, with its zone named (the comment is read
// elsewhere).

import type { StepRun, StepUsage } from '../core/api';

function tokens(count: number): string {
  return count >= 10_000 ? `${Math.round(count / 1000)}k` : count >= 1000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

/** `41.2k tokens · $0.62`; '' when nothing was reported. */
export function usageInWords(usage: StepUsage | undefined): string {
  if (!usage) return '';
  const parts: string[] = [];
  const total = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  if (total > 0) parts.push(`${tokens(total)} tokens`);
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(usage.costUsd < 0.1 ? 3 : 2)}`);
  return parts.join(' · ');
}

/** `14:05 UTC`, or `28 Nov, 14:05 UTC` on another day than `now`. */
export function clockInWords(at: number, now: number, timeZone?: string): string {
  const zone = timeZone ? { timeZone } : {};
  const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZoneName: 'short', ...zone }).format(at);
  const day = (epoch: number) => new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', ...zone }).format(epoch);
  return day(at) === day(now) ? time : `${day(at)}, ${time}`;
}

/** The step's liveness as the comment says it; '' for working (the status says that) or none. */
export function livenessInWords(step: StepRun, now: number, timeZone?: string): string {
  const minutes = step.livenessSince === undefined ? '' : ` for ${Math.max(1, Math.round((now - step.livenessSince) / 60_000))} min`;
  if (step.liveness === 'rateLimited') return step.resumeAt ? `rate limited, resumes ${clockInWords(step.resumeAt, now, timeZone)}` : 'rate limited';
  if (step.liveness === 'stalled') return `stalled: no output${minutes}`;
  if (step.liveness === 'quiet') return `quiet${minutes}`;
  return '';
}
