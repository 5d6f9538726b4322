// The fake Jira itself: the behaviours a production client depends on (enhanced search pages with an
// absent last token, 410 on the removed search, no v3 on Data Center, fields selection, JQL and its
// errors, comments and transitions, webhook payloads and signatures).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeJira, jiraAnswers } from '../fakes/jira';
import { waitFor } from '../helpers/temp';

const fakeJira = suite('fake jira');

async function call(fake: FakeJira, method: string, path: string, body?: unknown, authorization?: string) {
  const auth = authorization ?? (fake.mode === 'cloud' ? `Basic ${Buffer.from(`${fake.email}:${fake.token}`).toString('base64')}` : `Bearer ${fake.token}`);
  const response = await fetch(`${fake.url}${path}`, {
    method, headers: { Authorization: auth, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: any = text || undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON */ }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const jql = (fake: FakeJira, query: string, extra = '&fields=summary') => call(fake, 'GET', `/rest/api/3/search/jql?jql=${encodeURIComponent(query)}${extra}`);
const keys = (answer: { body: any }) => answer.body.issues.map((issue: any) => issue.key);

fakeJira('cloud: auth, myself, serverInfo; enhanced search pages end with isLast and NO nextPageToken; the old search is gone', async () => {
  const fake = await FakeJira.start();
  try {
    const denied = await call(fake, 'GET', '/rest/api/3/myself', undefined, `Basic ${Buffer.from(`${fake.email}:wrong`).toString('base64')}`);
    assert.equal([denied.status, denied.headers.get('content-type'), denied.text], [401, 'text/html;charset=UTF-8', 'Client must be authenticated to access this resource.']);
    assert.equal((await call(fake, 'GET', '/rest/api/2/serverInfo', undefined, '')).body.deploymentType, 'Cloud', 'serverInfo answers anonymously');
    const me = (await call(fake, 'GET', '/rest/api/3/myself')).body;
    assert.equal([me.accountId, me.accountType, me.emailAddress, me.displayName], [fake.me.accountId, 'atlassian', fake.email, 'Ada Lovelace']);

    for (let index = 1; index <= 5; index++) fake.addIssue({ summary: `Issue ${index}`, labels: ['agent'], description: `Line one\nLine ${index}` });
    const first = await jql(fake, 'project = KAN ORDER BY created ASC', '&fields=summary,description&maxResults=2');
    assert.equal([keys(first), first.body.isLast, typeof first.body.nextPageToken], [['KAN-1', 'KAN-2'], false, 'string']);
    assert.equal(Object.keys(first.body.issues[0].fields), ['summary', 'description'], 'only the fields asked for');
    assert.equal(first.body.issues[0].fields.description.content[1], { type: 'paragraph', content: [{ type: 'text', text: 'Line 1' }] }, 'ADF on v3');
    const second = await call(fake, 'POST', '/rest/api/3/search/jql', { jql: 'project = KAN ORDER BY created ASC', fields: ['summary'], maxResults: 2, nextPageToken: first.body.nextPageToken });
    assert.equal(keys(second), ['KAN-3', 'KAN-4']);
    const last = await jql(fake, 'project = KAN ORDER BY created ASC', `&fields=summary&maxResults=2&nextPageToken=${second.body.nextPageToken}`);
    assert.equal([keys(last), last.body.isLast, 'nextPageToken' in last.body, 'total' in last.body], [['KAN-5'], true, false, false]);
    const bare = await jql(fake, 'project = KAN', '');
    assert.equal(bare.body.issues[0], { id: fake.issues[4]!.id }, 'without fields only the id; newest first by default');
    assert.equal((await jql(fake, 'project = KAN', '&fields=summary&maxResults=500')).body.issues.length, 5);
    const v2 = await call(fake, 'GET', '/rest/api/2/search/jql?jql=key%3DKAN-1&fields=description');
    assert.is(v2.body.issues[0].fields.description, 'Line one\nLine 1', 'a string on v2');

    const gone = await call(fake, 'GET', '/rest/api/3/search?jql=project%3DKAN');
    assert.is(gone.status, 410);
    assert.match(gone.body.errorMessages[0], /^The requested API has been removed\. Please migrate to the \/rest\/api\/3\/search\/jql API\./);
    assert.is((await call(fake, 'POST', '/rest/api/2/search', { jql: 'project = KAN' })).status, 410);
    assert.is((await jql(fake, 'ORDER BY updated DESC')).body.errorMessages[0], 'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.');
  } finally {
    await fake.stop();
  }
});

fakeJira('JQL: a real subset, and Jira’s errors', async () => {
  const fake = await FakeJira.start();
  try {
    const a = fake.addIssue({ summary: 'Agent work', labels: ['agent'], assignee: 'me' });
    const b = fake.addIssue({ summary: 'Plain', labels: [] });
    const c = fake.addIssue({ summary: 'Done already', labels: ['agent', 'backend'], status: 'Done' });
    const d = fake.addIssue({ project: 'ABC', summary: 'Started elsewhere', labels: ['backend'], status: 'In Progress', priority: 'High' });
    const keysOf = async (query: string) => keys(await jql(fake, query));
    assert.equal(await keysOf('project = KAN AND labels = agent AND statusCategory != Done'), [a.key]);
    assert.equal(await keysOf('project in (KAN, abc) AND labels != agent ORDER BY key ASC'), [d.key], 'labels != x skips unlabelled issues, as in Jira');
    assert.equal(await keysOf('labels is EMPTY'), [b.key]);
    assert.equal(await keysOf('status = "In Progress" OR (statusCategory = done AND NOT labels in (backend))'), [d.key]);
    assert.equal(await keysOf('statusCategory in ("To Do", indeterminate) ORDER BY updated ASC'), [a.key, b.key, d.key]);
    assert.equal(await keysOf('assignee = currentUser()'), [a.key]);
    assert.equal(await keysOf(`assignee = "${fake.me.accountId}" or assignee is EMPTY ORDER BY created DESC`), [d.key, c.key, b.key, a.key]);
    assert.equal(await keysOf(`priority = High and key in (${d.key}, KAN-1)`), [d.key]);
    assert.equal(await keysOf('updated >= "-15m" AND updated <= 1d ORDER BY created ASC'), [a.key, b.key, c.key, d.key]);
    const minute = c.updated.slice(0, 16).replace('T', ' ');
    assert.equal(await keysOf(`updated >= "${minute}" ORDER BY updated DESC, created ASC`), [d.key, c.key], 'absolute times in UTC, by the minute');
    assert.equal(await keysOf(`created > "${minute.replace(/-/g, '/')}" and project = ABC`), [d.key]);

    const error = async (query: string) => {
      const answer = await jql(fake, query);
      assert.is(answer.status, 400, query);
      assert.equal(answer.body.errors, {});
      return answer.body.errorMessages[0];
    };
    assert.is(await error('project foo KAN'), "Error in the JQL Query: Expecting operator but got 'foo'. The valid operators are '=', '!=', '<', '>', '<=', '>=', '~', '!~', 'IN', 'NOT IN', 'IS' and 'IS NOT'. (line 1, character 9)");
    assert.is(await error('project = KAN AND'), 'Error in the JQL Query: Expecting a field name before the end of the query.');
    assert.is(await error('labels = OR'), "Error in the JQL Query: Expecting either a value, list or function but got 'OR'. You must surround 'OR' in quotation marks to use it as a value. (line 1, character 10)");
    assert.is(await error('project = KAN labels = x'), "Error in the JQL Query: Expecting either 'OR' or 'AND' but got 'labels'. (line 1, character 15)");
    assert.is(await error('summary ~ "open'), "Error in the JQL Query: The quoted string 'open' has not been completed. (line 1, character 11)");
    assert.is(await error('nosuch = 1'), "Field 'nosuch' does not exist or you do not have permission to view it.");
    assert.is(await error('project = XYZ'), "The value 'XYZ' does not exist for the field 'project'.");
    assert.is(await error('status = Blocked'), "The value 'Blocked' does not exist for the field 'status'.");
    assert.is(await error('updated >= yesterday'), "Date value 'yesterday' for field 'updated' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd', or a period format e.g. '-5d', '4w 2d'.");
    assert.is(await error('project = KAN ORDER BY labels'), "Not able to sort using field 'labels'.");
  } finally {
    await fake.stop();
  }
});

fakeJira('cloud: issues, ADF comments (a string is refused on v3), transitions; each write bumps updated', async () => {
  const fake = await FakeJira.start();
  try {
    const issue = fake.addIssue({ summary: 'Write to me', description: 'Hello' });
    assert.equal((await call(fake, 'GET', '/rest/api/3/issue/KAN-9')).body, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} });
    const got = (await call(fake, 'GET', `/rest/api/3/issue/${issue.key}?fields=status,assignee,updated`)).body;
    assert.equal(got.fields, { status: got.fields.status, assignee: null, updated: issue.updated });
    assert.equal([got.fields.status.name, got.fields.status.statusCategory.key], ['To Do', 'new']);

    const refused = await call(fake, 'POST', `/rest/api/3/issue/${issue.key}/comment`, { body: 'plain text' });
    assert.equal([refused.status, refused.body], [400, { errorMessages: [], errors: { comment: 'Comment body is not valid!' } }]);
    const before = issue.updated;
    const doc = { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Started' }] }] };
    const created = await call(fake, 'POST', `/rest/api/3/issue/${issue.key}/comment`, { body: doc });
    assert.equal([created.status, created.body.body, created.body.author.accountId], [201, doc, fake.me.accountId]);
    assert.ok(issue.updated > before, 'a comment bumps updated');
    assert.is((await call(fake, 'PUT', `/rest/api/2/issue/${issue.key}/comment/${created.body.id}`, { body: 'Finished\nfine' })).status, 200, 'v2 takes a string');
    assert.is((await call(fake, 'PUT', `/rest/api/3/issue/${issue.key}/comment/1`, { body: doc })).status, 404);
    assert.equal(fake.comments(issue).map((comment) => [comment.text, (comment.body as any).type]), [['Finished\nfine', 'doc']]);
    const listed = (await call(fake, 'GET', `/rest/api/3/issue/${issue.key}/comment`)).body;
    assert.equal([listed.startAt, listed.total, listed.comments[0].body.content.length], [0, 1, 2]);

    const transitions = (await call(fake, 'GET', `/rest/api/3/issue/${issue.key}/transitions`)).body.transitions;
    assert.equal(transitions.map((step: any) => [step.id, step.name, step.to.name, step.to.statusCategory.key]), [['21', 'Start progress', 'In Progress', 'indeterminate'], ['31', 'Done', 'Done', 'done']]);
    assert.equal((await call(fake, 'POST', `/rest/api/3/issue/${issue.key}/transitions`, { transition: { id: '41' } })).body, { errorMessages: ["Transition id '41' is not valid for this issue."], errors: {} });
    assert.is((await call(fake, 'POST', `/rest/api/3/issue/${issue.key}/transitions`, { transition: { id: '31' } })).status, 204);
    assert.is(issue.status, 'Done');

    fake.script(jiraAnswers.rateLimited(30, 'jira-quota-tenant-based'), (request) => request.path.endsWith('/myself'));
    const limited = await call(fake, 'GET', '/rest/api/3/myself');
    assert.equal([limited.status, limited.headers.get('retry-after'), limited.headers.get('x-ratelimit-remaining'), limited.headers.get('ratelimit-reason')], [429, '30', '0', 'jira-quota-tenant-based']);
    assert.match(limited.headers.get('x-ratelimit-reset')!, /^\d{4}-\d\d-\d\dT\d\d:\d\dZ$/);
    fake.script({ status: 401, body: '<html>Unauthorized</html>' });
    assert.equal((await call(fake, 'GET', '/rest/api/3/myself')).text, '<html>Unauthorized</html>');
    assert.equal(fake.calls.at(-1)!.status, 401);

    let release!: () => void;
    fake.hold((request) => request.path.endsWith('/myself'), new Promise<void>((resolve) => (release = resolve)));
    let answered = false;
    const calls = fake.calls.length;
    const held = call(fake, 'GET', '/rest/api/3/myself').then((answer) => ((answered = true), answer));
    // The fake has answered the held request (status set) and waits for the release; a later request is answered meanwhile.
    await waitFor(() => fake.calls.length > calls && fake.calls[calls]!.status === 200, 5000, 'the held request to reach the fake');
    assert.is((await call(fake, 'GET', '/rest/api/3/issue/KAN-404')).status, 404);
    assert.is(answered, false, 'the held request is still unanswered after a later one was answered');
    release();
    assert.is((await held).status, 200);
  } finally {
    await fake.stop();
  }
});

fakeJira('data center: Bearer, v2 only (v3 is 404), startAt/total search, string descriptions and comments', async () => {
  const fake = await FakeJira.start({ mode: 'datacenter' });
  try {
    const denied = await call(fake, 'GET', '/rest/api/2/myself', undefined, 'Bearer nope');
    assert.equal([denied.status, denied.headers.get('content-type'), denied.text.startsWith('<!DOCTYPE html>')], [401, 'text/html;charset=UTF-8', true]);
    const me = (await call(fake, 'GET', '/rest/api/2/myself')).body;
    assert.equal([me.name, me.key, 'accountId' in me], ['ada', 'JIRAUSER10000', false]);
    assert.equal((await call(fake, 'GET', '/rest/api/2/serverInfo')).body.deploymentType, 'DataCenter');
    for (const path of ['/rest/api/3/myself', '/rest/api/3/serverInfo', '/rest/api/3/search/jql?jql=project%3DKAN']) assert.is((await call(fake, 'GET', path)).status, 404, path);
    assert.is((await call(fake, 'GET', '/rest/api/2/search/jql?jql=project%3DKAN')).status, 404, 'no enhanced search on DC');

    for (let index = 1; index <= 3; index++) fake.addIssue({ summary: `DC ${index}`, description: `*wiki* ${index}`, assignee: 'me' });
    const page = (await call(fake, 'GET', '/rest/api/2/search?jql=assignee%20%3D%20currentUser()%20ORDER%20BY%20key%20ASC&startAt=1&maxResults=1&fields=description,assignee')).body;
    assert.equal([page.startAt, page.maxResults, page.total, page.issues[0].key, page.issues[0].fields.description, page.issues[0].fields.assignee.name], [1, 1, 3, 'KAN-2', '*wiki* 2', 'ada']);
    assert.ok('status' in (await call(fake, 'POST', '/rest/api/2/search', { jql: '' })).body.issues[0].fields, 'navigable fields by default; an empty JQL is allowed');
    fake.searchLimit = 2;
    const capped = (await call(fake, 'GET', '/rest/api/2/search?jql=project%3DKAN&maxResults=100')).body;
    assert.equal([capped.maxResults, capped.issues.length, capped.total], [2, 2, 3], 'a site that caps the page size says so in maxResults');
    const issue = fake.issues[0]!;
    assert.is((await call(fake, 'POST', `/rest/api/2/issue/${issue.key}/comment`, { body: { type: 'doc', version: 1, content: [] } })).status, 400);
    assert.is((await call(fake, 'POST', `/rest/api/2/issue/${issue.key}/comment`, { body: '{noformat}\nok\n{noformat}' })).status, 201);
    assert.equal(fake.comments(issue).map((comment) => comment.body), ['{noformat}\nok\n{noformat}']);
  } finally {
    await fake.stop();
  }
});

fakeJira('webhooks: v2 payloads with Jira’s changelog (labels as one space-joined string), signed and delivered with Jira’s headers', async () => {
  const fake = await FakeJira.start();
  const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ url: request.url!, headers: request.headers, body });
      response.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/jira`;
  try {
    const issue = fake.addIssue({ summary: 'Hooked', labels: ['bug'], description: { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'From ADF' }] }] } });
    const changelog = fake.update(issue, { labels: ['bug', 'agent'], status: 'In Progress' }) as any;
    assert.equal(changelog.items, [
      { field: 'labels', fieldtype: 'jira', fieldId: 'labels', from: null, fromString: 'bug', to: null, toString: 'bug agent' },
      { field: 'status', fieldtype: 'jira', fieldId: 'status', from: '10000', fromString: 'To Do', to: '3', toString: 'In Progress' },
    ]);
    const payload = fake.payload('jira:issue_updated', issue) as any;
    assert.equal([payload.webhookEvent, payload.issue_event_type_name, payload.user.accountId, payload.changelog], ['jira:issue_updated', 'issue_generic', fake.me.accountId, changelog]);
    assert.equal([payload.issue.key, payload.issue.self, payload.issue.fields.description, payload.issue.fields.labels], [issue.key, `${fake.url}/rest/api/2/issue/${issue.id}`, 'From ADF', ['bug', 'agent']]);
    assert.equal([payload.issue.fields.status.statusCategory.key, payload.issue.fields.priority.name, payload.issue.fields.project.key, payload.issue.fields.updated], ['indeterminate', 'Medium', 'KAN', issue.updated]);
    assert.is(typeof payload.timestamp, 'number');
    assert.not.ok('changelog' in fake.payload('jira:issue_created', issue));
    fake.addComment(issue, 'Please look');
    const comment = fake.payload('comment_created', issue) as any;
    assert.equal([comment.comment.body, comment.comment.author.displayName, comment.issue.key, 'user' in comment], ['Please look', 'Grace Hopper', issue.key, false]);

    const answer = await fake.deliver(hook, payload, { secret: 's3cret', identifier: 'hook-1', retry: 2, token: 't o k' });
    assert.equal(answer, { status: 202, body: { ok: true } });
    const [first] = received;
    assert.is(first!.url, '/hooks/jira?token=t%20o%20k');
    assert.equal([first!.headers['x-atlassian-webhook-identifier'], first!.headers['x-atlassian-webhook-flow'], first!.headers['x-atlassian-webhook-retry'], first!.headers['user-agent']], ['hook-1', 'Primary', '2', 'Atlassian Webhook HTTP Client']);
    const signature = String(first!.headers['x-hub-signature']);
    const expected = `sha256=${createHmac('sha256', 's3cret').update(first!.body).digest('hex')}`;
    assert.ok(signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected)), 'HMAC-SHA256 of the raw body');
    assert.is(first!.headers['x-hub-signature-256'], undefined, 'X-Hub-Signature, not -256');
    assert.equal(JSON.parse(first!.body), payload);

    await fake.deliver(hook, payload);
    const [, plain] = received;
    assert.equal([plain!.headers['x-hub-signature'], plain!.headers['x-atlassian-webhook-retry'], typeof plain!.headers['x-atlassian-webhook-identifier']], [undefined, undefined, 'string']);
    assert.not.equal(plain!.headers['x-atlassian-webhook-identifier'], 'hook-1');
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await fake.stop();
  }
});

fakeJira.run();
