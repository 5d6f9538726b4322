// The fake GitHub itself: the behaviours the production client depends on (Link pagination,
// conditional requests, `since`, pull requests in the issues list, writes, signed webhooks).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeGitHub } from '../fakes/github';

const fakeGitHub = suite('fake github');
const repo = 'acme/app';

async function get(fake: FakeGitHub, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(path.startsWith('http') ? path : `${fake.url}${path}`, {
    headers: { Authorization: `Bearer ${fake.token}`, Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28', ...headers },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

fakeGitHub('lists issues page by page with Link, pull requests included, filtered by since and labels; 304 costs nothing', async () => {
  const fake = await FakeGitHub.start();
  try {
    for (let index = 1; index <= 5; index++) fake.addIssue(repo, { title: `Issue ${index}`, labels: index % 2 ? ['agent', 'bug'] : ['agent'] });
    fake.addIssue(repo, { title: 'A pull request', pullRequest: true });
    const first = await get(fake, `/repos/${repo}/issues?state=all&labels=agent&per_page=2&sort=updated&direction=asc`);
    assert.equal(first.body.map((issue: any) => issue.number), [1, 2]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!;
    assert.is(next, `${fake.url}/repos/${repo}/issues?state=all&labels=agent&per_page=2&sort=updated&direction=asc&page=2`);
    assert.match(first.headers.get('link')!, /page=3>; rel="last"/);
    const last = await get(fake, `/repos/${repo}/issues?state=all&labels=agent&per_page=2&sort=updated&direction=asc&page=3`);
    assert.equal([last.body.length, /rel="next"/.test(last.headers.get('link')!)], [1, false]);
    assert.equal((await get(fake, `/repos/${repo}/issues?labels=AGENT,bug`)).body.map((issue: any) => issue.number), [5, 3, 1], 'all the labels, newest first');
    const all = await get(fake, `/repos/${repo}/issues`);
    assert.equal(all.body.filter((issue: any) => 'pull_request' in issue).map((issue: any) => [issue.number, issue.pull_request.html_url]), [[6, 'https://github.com/acme/app/pull/6']]);

    const changed = fake.update(fake.issue(repo, 2)!, { title: 'Issue 2, edited' });
    assert.equal(changed, { title: { from: 'Issue 2' } });
    const since = fake.issue(repo, 2)!.updated_at;
    assert.equal((await get(fake, `/repos/${repo}/issues?since=${since}`)).body.map((issue: any) => issue.title), ['Issue 2, edited'], 'updated_at >= since');

    const remaining = fake.rateLimit.remaining;
    const again = await get(fake, `/repos/${repo}/issues?since=${since}`, { 'If-None-Match': all.headers.get('etag')! });
    assert.is(again.status, 200, 'another answer, another ETag');
    const etag = again.headers.get('etag')!;
    assert.match(etag, /^W\/"[0-9a-f]+"$/);
    const idle = await get(fake, `/repos/${repo}/issues?since=${since}`, { 'If-None-Match': etag });
    assert.equal([idle.status, idle.body, fake.rateLimit.remaining, idle.headers.get('x-ratelimit-remaining')], [304, undefined, remaining - 1, String(remaining - 1)]);
    fake.update(fake.issue(repo, 2)!, { labels: ['agent', 'urgent'] });
    assert.is((await get(fake, `/repos/${repo}/issues?since=${since}`, { 'If-None-Match': etag })).status, 200, 'a change answers 200 again');
  } finally {
    await fake.stop();
  }
});

fakeGitHub('errors as GitHub gives them; writes to comments and labels; Enterprise under /api/v3', async () => {
  const fake = await FakeGitHub.start({ enterprise: true });
  try {
    fake.addRepo('acme/hidden', { readable: false });
    const issue = fake.addIssue(repo, { title: 'Write to me', labels: ['factory: working'] });
    assert.equal((await get(fake, '/user', { Authorization: 'token ghp_wrong' })).body, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    const user = await get(fake, '/user', { Authorization: `token ${fake.token}` });
    assert.equal([user.body.login, user.headers.get('x-oauth-scopes')], [fake.user.login, 'repo, read:org']);
    assert.is((await get(fake, '/repos/acme/hidden')).status, 404);
    assert.is((await get(fake, `${fake.url.replace('/api/v3', '')}/repos/${repo}`)).status, 404, 'outside /api/v3');

    const post = (path: string, method: string, body: unknown) => fetch(`${fake.url}${path}`, { method, headers: { Authorization: `Bearer ${fake.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const created = await post(`/repos/${repo}/issues/${issue.number}/comments`, 'POST', { body: 'Started' });
    const comment = await created.json() as any;
    assert.equal([created.status, comment.user.login, comment.html_url], [201, fake.user.login, `${fake.url.replace('/api/v3', '')}/acme/app/issues/1#issuecomment-${comment.id}`]);
    assert.is((await post(`/repos/${repo}/issues/comments/${comment.id}`, 'PATCH', { body: 'Finished' })).status, 200);
    assert.is((await post(`/repos/${repo}/issues/comments/1`, 'PATCH', { body: 'x' })).status, 404);
    assert.equal(fake.comments(repo, issue.number).map((entry) => entry.body), ['Finished']);
    const added = await (await post(`/repos/${repo}/issues/1/labels`, 'POST', { labels: ['factory: done'] })).json() as any;
    assert.equal(added.map((label: any) => label.name), ['factory: working', 'factory: done'], 'the full label array');
    const removed = await post(`/repos/${repo}/issues/1/labels/${encodeURIComponent('factory: working')}`, 'DELETE', undefined);
    assert.equal([removed.status, (await removed.json() as any).map((label: any) => label.name)], [200, ['factory: done']]);
    const absent = await post(`/repos/${repo}/issues/1/labels/${encodeURIComponent('factory: working')}`, 'DELETE', undefined);
    assert.equal([absent.status, (await absent.json() as any).message], [404, 'Label does not exist']);
    assert.ok(fake.calls.every((call) => call.path.startsWith('/api/v3/') || call.path === '/repos/acme/app'));

    fake.rateLimit.remaining = 0;
    const limited = await get(fake, '/user');
    assert.equal([limited.status, limited.headers.get('x-ratelimit-remaining')], [403, '0']);
    assert.match(limited.body.message, /^API rate limit exceeded for user ID 1\./);
  } finally {
    await fake.stop();
  }
});

fakeGitHub('webhooks are signed over the raw body, JSON or form-encoded', async () => {
  const fake = await FakeGitHub.start();
  const received: { headers: Record<string, any>; body: string }[] = [];
  const hooks = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(hooks.address() as { port: number }).port}/hooks`;
  try {
    const issue = fake.addIssue(repo, { title: 'Hooked', labels: ['agent'] });
    const payload = fake.payload('issues', 'labeled', issue) as any;
    assert.equal([payload.action, payload.label.name, payload.issue.labels[0].name, payload.repository.full_name, payload.sender.login], ['labeled', 'agent', 'agent', repo, 'monalisa']);
    assert.equal(await fake.deliver(url, 'issues', payload, { secret: 's3cret' }), { status: 200, body: { ok: true } });
    await fake.deliver(url, 'ping', fake.payload('ping'), { secret: 's3cret', form: true });
    for (const { headers, body } of received) {
      const expected = Buffer.from(`sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
      assert.ok(timingSafeEqual(Buffer.from(headers['x-hub-signature-256']), expected));
      assert.match(headers['user-agent'], /^GitHub-Hookshot\//);
      assert.match(headers['x-github-delivery'], /^[0-9a-f-]{36}$/);
    }
    assert.is(received[1]!.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.is(JSON.parse(new URLSearchParams(received[1]!.body).get('payload')!).hook_id, fake.hookId);
    await fake.deliver(url, 'issues', payload, { signature: null });
    assert.not.ok('x-hub-signature-256' in received[2]!.headers);
  } finally {
    hooks.closeAllConnections();
    await new Promise((resolve) => hooks.close(resolve));
    await fake.stop();
  }
});

fakeGitHub.run();
