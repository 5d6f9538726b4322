// Linear's agent platform (PROVIDERS §8), the wire half: the `AgentSessionEvent` webhook read into
// a plain event, and the two mutations a session is told things with, `agentActivityCreate` and
// `agentSessionUpdate`, checked against linear/linear packages/sdk/src/schema.graphql
// (AgentSessionEventWebhookPayload, AgentActivityCreateInput, AgentSessionUpdateInput). What the
// session shows, and when, is decided in ../linear-agent.ts.

import type { Connection, Issue } from '../../core/api';
import { isRecord } from '../../core/validate';
import { ProviderError, text } from '../provider';
import { graphql } from './linear';

type Json = Record<string, unknown>;

/** Activity content by `AgentActivityType` (Linear's developer docs, "activity content payload"). */
export type AgentActivityContent =
  | { type: 'thought' | 'elicitation' | 'response' | 'error'; body: string }
  | { type: 'action'; action: string; parameter: string; result?: string };

/** One `agentActivityCreate` input: `id` is a UUID v4 chosen by Factory, so sending it again is a retry, not a copy. */
export interface AgentActivityInput {
  id: string;
  agentSessionId: string;
  content: AgentActivityContent;
  ephemeral?: boolean;
  signal?: 'select' | 'stop' | 'auth' | 'continue';
  signalMetadata?: Json;
}

/** An `AgentSessionEvent` delivery, read from its signed body. */
export interface AgentSessionEvent {
  action: 'created' | 'prompted';
  organizationId: string;
  appUserId?: string;
  oauthClientId?: string;
  sessionId: string;
  /** The session's issue as a run's issue (absent: a session without an issue). */
  issue?: Issue;
  /** `prompted`: the person's activity. */
  activity?: { id: string; body: string; signal?: string; userId?: string; userName?: string; userEmail?: string };
}

/** Characters of the body and prompt context kept on a run's issue. */
const textLimit = 1_000_000;

/**
 * Reads an `AgentSessionEventWebhookPayload`; a string says why it is not one (for the ledger).
 * The issue comes from the signed body (IssueWithDescriptionChildWebhookPayload: id, identifier,
 * title, description, url, team): `issue.raw` keeps it with `promptContext` (what Linear composed
 * for the agent: the issue, its comments and the workspace's guidance) and the mentioning comment.
 */
export function readAgentSessionEvent(payload: unknown): AgentSessionEvent | string {
  if (!isRecord(payload) || payload.type !== 'AgentSessionEvent') return 'not an agent session event';
  const session = isRecord(payload.agentSession) ? payload.agentSession : undefined;
  const sessionId = text(session?.id);
  const organizationId = text(payload.organizationId);
  if (!session || !sessionId || !organizationId) return 'an agent session event needs agentSession.id and organizationId';
  if (payload.action !== 'created' && payload.action !== 'prompted') return `agent session ${payload.action === undefined ? 'event without an action' : `action ${String(payload.action).slice(0, 40)}`}`;
  const event: AgentSessionEvent = {
    action: payload.action, organizationId, sessionId,
    ...(text(payload.appUserId) ? { appUserId: text(payload.appUserId)! } : {}),
    ...(text(payload.oauthClientId) ? { oauthClientId: text(payload.oauthClientId)! } : {}),
  };
  const issue = isRecord(session.issue) ? session.issue : undefined;
  if (issue && text(issue.identifier) && text(issue.title)?.trim()) {
    const raw: Json = { ...issue, agentSessionId: sessionId };
    if (text(payload.promptContext)) raw.promptContext = text(payload.promptContext)!.slice(0, textLimit);
    if (isRecord(session.comment) && text(session.comment.body)) raw.comment = { body: text(session.comment.body)!.slice(0, textLimit) };
    event.issue = {
      title: text(issue.title)!.trim().slice(0, 1000), key: text(issue.identifier)!, source: 'linear', labels: [], raw,
      ...(text(issue.description) ? { description: text(issue.description)!.slice(0, textLimit) } : {}),
      ...(text(issue.url) ? { url: text(issue.url)! } : {}),
    };
  }
  const activity = isRecord(payload.agentActivity) ? payload.agentActivity : undefined;
  if (payload.action === 'prompted') {
    if (!activity || !text(activity.id)) return 'a prompted event needs agentActivity.id';
    const content = isRecord(activity.content) ? activity.content : {};
    const user = isRecord(activity.user) ? activity.user : {};
    // The text is content.body; some senders put it on the activity itself.
    const body = text(content.body) ?? text(activity.body) ?? '';
    event.activity = {
      id: text(activity.id)!, body: body.slice(0, 10_000),
      ...(text(activity.signal) ? { signal: text(activity.signal)! } : {}),
      ...(text(activity.userId) ?? text(user.id) ? { userId: (text(activity.userId) ?? text(user.id))! } : {}),
      ...(text(user.name) ? { userName: text(user.name)! } : {}),
      ...(text(user.email) ? { userEmail: text(user.email)! } : {}),
    };
  }
  return event;
}

/** Posts one activity to its session. A retry with the same id that Linear already has counts as posted. */
export async function createAgentActivity(connection: Connection, input: AgentActivityInput): Promise<void> {
  const data = await graphql(connection, `mutation FactoryAgentActivity($input: AgentActivityCreateInput!) {
    agentActivityCreate(input: $input) { success agentActivity { id } } }`, { input }).catch((error: unknown) => {
    if (error instanceof ProviderError && /already exists|duplicate/i.test(error.message)) return { agentActivityCreate: { success: true } };
    throw error;
  });
  if (!isRecord(data.agentActivityCreate) || data.agentActivityCreate.success !== true) throw new ProviderError('Linear did not take the agent activity (no success in its answer)', true);
}

/** Points the session's external links at the run's page (replacing them: sending it again changes nothing). */
export async function linkAgentSession(connection: Connection, sessionId: string, url: string): Promise<void> {
  const data = await graphql(connection, `mutation FactoryAgentSessionLink($id: String!, $input: AgentSessionUpdateInput!) {
    agentSessionUpdate(id: $id, input: $input) { success } }`, { id: sessionId, input: { externalUrls: [{ label: 'Factory run', url }] } });
  if (!isRecord(data.agentSessionUpdate) || data.agentSessionUpdate.success !== true) throw new ProviderError('Linear did not update the agent session (no success in its answer)', true);
}

/** The id of the Linear workspace (organization) the connection's token belongs to. */
export async function workspaceOf(connection: Connection): Promise<string> {
  const data = await graphql(connection, 'query FactoryOrganization { organization { id } }');
  const id = isRecord(data.organization) ? text(data.organization.id) : undefined;
  if (!id) throw new ProviderError('Linear answered without the workspace (organization) of this account');
  return id;
}
