// Posts a Linear agent session's activities. Each is recorded under a key (an event seen again
// plans nothing) with the UUID Linear keeps it under, written down before it is sent and marked
// sent after; a session's activities go in order, one sender per session, each retried on the
// delays given. What Linear refuses after every try is left unsent until the next start.

import { randomUUID } from 'node:crypto';
import type { Connection } from '../core/api';
import { errorMessage } from '../core/errors';
import { setTimer } from '../core/timers';
import { ProviderError } from './provider';
import { createAgentActivity, linkAgentSession, type AgentActivityContent, type AgentActivityInput } from './providers/linear-agent';

/** Waits before the 2nd, 3rd, ... try of an activity Linear did not take. */
const defaultActivityRetryDelaysMs: readonly number[] = [2_000, 15_000, 60_000, 300_000];

/** An activity to post (or the session's link to set), recorded before it is sent. */
export interface PlannedActivity {
  /** What it reports (`start:build:1`, `final`): an event seen again plans nothing. */
  key: string;
  /** The UUID v4 Linear keeps it under. */
  id: string;
  sent?: true;
  /** Until sent: what to post; a session update carries `link` instead. */
  content?: AgentActivityContent;
  signal?: AgentActivityInput['signal'];
  signalMetadata?: Record<string, unknown>;
  ephemeral?: true;
  link?: string;
}

/** What the poster needs of the sessions it posts for. */
interface ActivityPorts<Session extends { activities: PlannedActivity[] }> {
  /** The session kept under this id; undefined when there is none. */
  session(sessionId: string): Session | undefined;
  /** The Linear account the session's trigger uses now. */
  connection(session: Session): Connection | undefined;
  /** Runs a call with the account's token fresh. */
  fresh<T>(connection: Connection, call: (current: Connection) => Promise<T>): Promise<T>;
  /** Reports an activity Linear did not take (the run's log, the trigger's ledger). */
  note(session: Session, line: string): void;
  /** Writes every session down; resolves once this content (or newer) is on disk. */
  save(): Promise<void>;
  retryDelaysMs?: readonly number[];
}

export class ActivityPoster<Session extends { activities: PlannedActivity[] }> {
  /** Sending under way, by session: one at a time, in order. */
  private readonly sending = new Map<string, Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  /** Activities Linear did not take after every retry: left unsent until the next start. */
  private readonly refused = new Set<string>();
  private stopped = false;

  constructor(private readonly ports: ActivityPorts<Session>) {}

  /** Records an activity under `key` unless one was recorded under it before. */
  plan(sessionId: string, key: string, content: AgentActivityContent | undefined, extra: Pick<PlannedActivity, 'signal' | 'signalMetadata' | 'ephemeral' | 'link'> = {}): void {
    const session = this.ports.session(sessionId);
    if (!session || session.activities.some((activity) => activity.key === key)) return;
    session.activities.push({ key, id: randomUUID(), ...(content ? { content } : {}), ...extra });
  }

  /** Sends the session's unsent activities in order, each written down first; one sender per session. */
  send(sessionId: string): void {
    if (this.sending.has(sessionId) || this.stopped) return;
    const work = this.sendAll(sessionId).catch((error: unknown) => console.error(`Linear agent session ${sessionId}: ${errorMessage(error)}`)).finally(() => {
      this.sending.delete(sessionId);
      const session = this.ports.session(sessionId);
      if (!this.stopped && session?.activities.some((activity) => !activity.sent && !this.refused.has(activity.id))) this.send(sessionId);
    });
    this.sending.set(sessionId, work);
  }

  private async sendAll(sessionId: string): Promise<void> {
    const session = this.ports.session(sessionId);
    const delays = this.ports.retryDelaysMs ?? defaultActivityRetryDelaysMs;
    for (let next = session?.activities.find((activity) => !activity.sent && !this.refused.has(activity.id)); session && next && !this.stopped; next = session.activities.find((activity) => !activity.sent && !this.refused.has(activity.id))) {
      await this.ports.save(); // what is about to be sent, with its id, is on disk first
      const connection = this.ports.connection(session);
      for (let tries = 0; ; tries++) {
        try {
          if (!connection) throw new ProviderError('the trigger or its Linear account is gone');
          if (next.link) await this.ports.fresh(connection, (current) => linkAgentSession(current, sessionId, next.link!));
          else await this.ports.fresh(connection, (current) => createAgentActivity(current, { id: next.id, agentSessionId: sessionId, content: next.content!, ...(next.ephemeral ? { ephemeral: true } : {}), ...(next.signal ? { signal: next.signal } : {}), ...(next.signalMetadata ? { signalMetadata: next.signalMetadata } : {}) }));
          break;
        } catch (error) {
          const retryable = !(error instanceof ProviderError) || error.retryable || error.retryAt !== undefined;
          if (!retryable || tries >= delays.length || this.stopped) {
            // Left unsent: tried again at the next start.
            this.refused.add(next.id);
            this.ports.note(session, `Linear did not take the session's ${next.key.split(':')[0]} activity: ${errorMessage(error)}`);
            return;
          }
          const retryAt = error instanceof ProviderError ? error.retryAt : undefined;
          await this.wait(retryAt !== undefined ? Math.max(retryAt - Date.now(), delays[tries]!) : delays[tries]!);
        }
      }
      next.sent = true;
      delete next.content;
      delete next.signalMetadata;
    }
    await this.ports.save();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimer(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  /** Stops sending (what is unsent goes at the next start); resolves once what is under way ends. */
  stop(): Promise<unknown> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    return Promise.all(this.sending.values());
  }
}
