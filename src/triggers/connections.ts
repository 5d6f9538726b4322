// Accounts at trackers and code hosts (spec "Accounts and triggers"): saved only once the service
// has verified the credentials, tested without saving, refused deletion while a trigger uses them.
// The token never leaves the engine: every view carries `hasToken` instead, and saving without a
// token keeps the stored one.

import type { Connection, ConnectionAccount, ConnectionKind, ConnectionView, TestResult } from '../core/api';
import { ConflictError, NotFoundError, ValidationError, quote, testFailure } from '../core/errors';
import { newId } from '../core/ids';
import { validateConnection } from '../core/trigger-config';
import type { ConfigService } from '../engine/config';
import type { TrackerProvider } from './provider';

function connectionView({ token, oauth, ...connection }: Connection): ConnectionView {
  // An app installation shows its client id only; its secret, refresh token and times stay here.
  const app = oauth ? { oauth: { clientId: oauth.clientId, hasClientSecret: Boolean(oauth.clientSecret), ...(oauth.expiresAt !== undefined ? { expiresAt: oauth.expiresAt } : {}) } } : {};
  return { ...connection, hasToken: Boolean(token), ...app, ...(oauth?.problem ? { problem: oauth.problem } : {}) };
}

export class ConnectionService {
  constructor(
    private readonly config: ConfigService,
    private readonly providers: Partial<Record<ConnectionKind, TrackerProvider>>,
  ) {}

  views(): ConnectionView[] {
    return this.config.current.connections.map(connectionView);
  }

  get(id: string | undefined): Connection | undefined {
    return this.config.current.connections.find((connection) => connection.id === id);
  }

  /** Verifies without saving: `{ ok, account }`, or `{ ok: false, error, fields? }` in the service's words. */
  async test(input: unknown): Promise<TestResult & { account?: ConnectionAccount }> {
    try {
      const { account } = await this.verified(input);
      return { ok: true, account };
    } catch (error) {
      return testFailure(error);
    }
  }

  /** Creates (no id) or updates an account once the service accepts its credentials. */
  async save(input: unknown): Promise<ConnectionView> {
    const verified = await this.verified(input);
    return this.config.update((config) => {
      const index = verified.id ? config.connections.findIndex((connection) => connection.id === verified.id) : -1;
      if (verified.id && index < 0) throw new NotFoundError(`No account with id ${quote(verified.id)}`);
      // An app installation's token may have been refreshed meanwhile: the stored one is the live one.
      const live = verified.oauth && index >= 0 ? { token: config.connections[index]!.token, oauth: config.connections[index]!.oauth } : {};
      const connection: Connection = { ...verified, id: verified.id ?? newId('con'), ...live };
      const connections = index < 0 ? [...config.connections, connection] : config.connections.with(index, connection);
      return { config: { ...config, connections }, result: connectionView(connection) };
    });
  }

  delete(id: unknown): Promise<void> {
    return this.config.update((config) => {
      const connection = config.connections.find((candidate) => candidate.id === id);
      if (!connection) throw new NotFoundError(`No account with id ${quote(id)}`);
      const users = config.triggers.filter((trigger) => trigger.connectionId === connection.id);
      if (users.length > 0) {
        throw new ConflictError(`The account ${quote(connection.name)} is used by the trigger${users.length === 1 ? '' : 's'} ${users.map((trigger) => quote(trigger.name)).join(', ')}: delete them or give them another account first`);
      }
      return { config: { ...config, connections: config.connections.filter((candidate) => candidate.id !== connection.id) }, result: undefined };
    });
  }

  /** The account checked, with its stored token when none was given, and the service's answer. */
  private async verified(input: unknown): Promise<Omit<Connection, 'id'> & { id?: string; account: ConnectionAccount }> {
    const clean = validateConnection(input, Object.keys(this.providers) as ConnectionKind[]);
    const stored = clean.id ? this.get(clean.id) : undefined;
    if (clean.id && !stored) throw new NotFoundError(`No account with id ${quote(clean.id)}`);
    if (stored && stored.kind !== clean.kind) throw new ConflictError('An account cannot change its kind: add a new account instead');
    const token = clean.token ?? stored?.token;
    if (!token) throw new ValidationError([{ field: 'token', message: 'The API key or token is empty: enter it' }], 'Account not saved:');
    const provider = this.providers[clean.kind]!;
    const candidate: Connection = { ...clean, id: clean.id ?? '', token };
    // An app installation (linear-oauth.ts) stays one while no new token replaces its own.
    const oauth = clean.token === undefined ? stored?.oauth : undefined;
    if (oauth) candidate.oauth = oauth;
    const account = await provider.verifyConnection(candidate);
    return { ...clean, token, account, name: clean.name || `${provider.name} (${account.name})`, ...(oauth ? { oauth } : {}) };
  }
}
