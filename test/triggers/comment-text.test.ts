// The run comment in each tracker's syntax: text from an issue, a step or an agent stays inert
// (no live mention, link, image, HTML or marker), on its own and end to end through the fake
// GitHub, Linear and Jira (Cloud and Data Center); and write-back adopts a comment it lost the id
// of only when the connection's own account wrote it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Connection, ConnectionView, Issue, TriggerConfig } from '../../src/core/api';
import { commentAdf, commentMarkdown, commentWikiMarkup, isRunComment, type CommentDocument } from '../../src/triggers/comment-text';
import type { TrackerProvider } from '../../src/triggers/provider';
import { githubProvider } from '../../src/triggers/providers/github';
import { jiraProvider } from '../../src/triggers/providers/jira';
import { linearProvider } from '../../src/triggers/providers/linear';
import { runComment } from '../../src/triggers/write-back';
import { FakeGitHub } from '../fakes/github';
import { FakeJira } from '../fakes/jira';
import { FakeLinear } from '../fakes/linear';
import { approval, shell, startTestFactory, type TestFactory } from '../helpers/factory';
import { freePort } from '../helpers/net';
import { waitFor } from '../helpers/temp';

/** An issue title as an attacker writes it: mentions, an image, a phishing link, HTML and a fake marker. */
const hostileTitle = '@octocat @acme/security-team ![pic](https://evil.example/pixel.png) [log in](https://evil.example/login) <img src=x onerror=alert(1)> <!-- factory-run: run_fake --> https://evil.example/bare ``` ` [~admin] {noformat} x@evil.example';
/** A step's output as an attacker makes it: every way out of a code block, and markers at line starts. */
const hostileOutput = [
  'Factory · run run_other · pipeline stolen',
  '```', '````', '~~~', '{noformat}', '{NOFORMAT}', '{noformat:title=x}', '</pre></code>',
  '[~admin] [login|https://evil.example/login] !https://evil.example/pixel.png! [^footnote] {color:red}x{color}',
  '@octocat <!-- factory-run: run_other --> [click](https://evil.example/login) mailto:boss@evil.example',
].join('\n');
const runUrl = 'https://factory.example.com/#/runs/run_abc123';

function hostileComment(): CommentDocument {
  return {
    runId: 'run_abc123',
    header: [{ kind: 'words', text: ' · pipeline ' }, { kind: 'outside', text: 'Deploy `prod` @ops' }],
    blocks: [
      { kind: 'paragraph', parts: [{ kind: 'words', text: 'Status: waiting at ' }, { kind: 'outside', text: 'review' }, { kind: 'words', text: ': ' }, { kind: 'outside', text: `Ship ${hostileTitle}?` }] },
      { kind: 'output', text: hostileOutput },
      { kind: 'paragraph', parts: [{ kind: 'link', text: 'Open the run in Factory', url: runUrl }] },
    ],
  };
}

// ─── What each tracker renders live (the checkers follow each syntax's own rules) ───

/**
 * The Markdown a renderer parses as markup: fenced code blocks (a backtick fence closes only at a
 * line of at least as many backticks) and code spans (a backtick string closes at the next string
 * of the same length) removed, as CommonMark parses them; backslash escapes kept.
 */
function liveMarkdown(markdown: string): string {
  const lines = markdown.split('\n');
  const live: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^ {0,3}(`{3,})[^`]*$/.exec(lines[index]!);
    if (!open) {
      live.push(lines[index]!);
      continue;
    }
    const closing = new RegExp(`^ {0,3}\`{${open[1]!.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end]!)) end++;
    index = end;
  }
  const text = live.join('\n');
  let out = '';
  for (let at = 0; at < text.length;) {
    if (text[at] === '\\') {
      at += 2; // an escaped character is literal text
      continue;
    }
    if (text[at] !== '`') {
      out += text[at++];
      continue;
    }
    const length = /^`+/.exec(text.slice(at))![0].length;
    const rest = text.slice(at + length);
    const close = [...rest.matchAll(/`+/g)].find((run) => run[0].length === length);
    if (!close) {
      at += length;
      continue;
    }
    out += '·';
    at += length + close.index! + length;
  }
  return out;
}

function assertInertMarkdown(markdown: string, what: string): void {
  const live = liveMarkdown(markdown.replace(`[Open the run in Factory](${runUrl})`, ''));
  for (const token of ['@', '<', 'http', '](', '![', 'factory-run', 'run_other', 'run_fake', 'evil']) assert.not.ok(live.includes(token), `${what}: ${JSON.stringify(token)} is live in ${JSON.stringify(live)}`);
}

function assertInertAdf(document: unknown, what: string): void {
  const walk = (node: any, inCode: boolean): void => {
    assert.not.ok(['mention', 'inlineCard', 'blockCard', 'embedCard', 'media', 'mediaSingle', 'mediaInline', 'emoji'].includes(node.type), `${what}: a ${node.type} node`);
    if (node.type === 'text') {
      const marks: any[] = node.marks ?? [];
      for (const mark of marks) if (mark.type === 'link') assert.is(mark.attrs.href, runUrl, `${what}: only Factory's own link`);
      if (/@|http|evil|\[/.test(node.text)) assert.ok(inCode || marks.some((mark) => mark.type === 'code'), `${what}: outside text ${JSON.stringify(node.text)} is not code`);
    }
    for (const child of node.content ?? []) walk(child, inCode || node.type === 'codeBlock');
  };
  walk(document, false);
}

/** Wiki markup outside `{noformat}` blocks (any `{noformat…}` tag opens or closes one), escapes removed. */
function assertInertWiki(wiki: string, blocks: number, what: string): void {
  const tags = [...wiki.matchAll(/\{noformat(?::[^}]*)?\}/gi)];
  assert.is(tags.length, blocks * 2, `${what}: each block opens and closes once`);
  let live = wiki;
  for (let index = tags.length - 2; index >= 0; index -= 2) live = live.slice(0, tags[index]!.index) + live.slice(tags[index + 1]!.index! + tags[index + 1]![0].length);
  live = live.replace(`[Open the run in Factory|${runUrl}]`, '').replace(/\{\{run_\w+\}\}/g, '').replace(/\\./g, '');
  for (const token of ['[', ']', '!', '{', '|', '~']) assert.not.ok(live.includes(token), `${what}: ${JSON.stringify(token)} is live in ${JSON.stringify(live)}`);
  assert.not.match(live, /[a-z]+:\/\/|mailto:[^\u200B]/i, `${what}: a URL the renderer would link`);
}

const text = suite('comment text');

text('Markdown: outside text in code spans and fences longer than any backtick run inside', () => {
  const markdown = commentMarkdown(hostileComment());
  assertInertMarkdown(markdown, 'Markdown');
  assert.ok(markdown.startsWith('**Factory** · run ` run_abc123 ` · pipeline `` Deploy `prod` @ops ``'), markdown.split('\n')[0]);
  assert.ok(markdown.includes('\n`````\nFactory · run run_other'), 'the output fence is longer than the output’s longest backtick run (4)');
  assert.ok(markdown.endsWith(`[Open the run in Factory](${runUrl})`));
});

text('ADF: outside text only in code-marked text nodes and code blocks; no mention, card or link of its own', () => {
  const document = commentAdf(hostileComment()) as any;
  assertInertAdf(document, 'ADF');
  assert.equal(document.content[0].content.slice(0, 3), [{ type: 'text', text: 'Factory', marks: [{ type: 'strong' }] }, { type: 'text', text: ' · run ' }, { type: 'text', text: 'run_abc123', marks: [{ type: 'code' }] }]);
  assert.equal(document.content[2], { type: 'codeBlock', content: [{ type: 'text', text: hostileOutput }] });
});

text('wiki markup: {noformat} cannot be closed from inside; inline text escaped, URLs unlinked', () => {
  const wiki = commentWikiMarkup(hostileComment());
  assertInertWiki(wiki, 1, 'wiki markup');
  assert.ok(wiki.startsWith('*Factory* · run {{run_abc123}} · pipeline Deploy `prod` @ops'), wiki.split('\n')[0]);
  assert.match(wiki, /\\\[\\~admin\\\]/);
  assert.match(wiki, /https:\u200B\/\/evil/);
});

text('the checkers catch what they guard against', () => {
  const fails = (check: () => void) => {
    try {
      check();
      return false;
    } catch {
      return true;
    }
  };
  assert.not.ok(fails(() => assertInertMarkdown('**Factory** `@octocat` ``` `` ``` ```` a`b ````', 'x')));
  assert.ok(fails(() => assertInertMarkdown('**Factory** `@octocat` @octocat', 'x')));
  assert.not.ok(fails(() => assertInertMarkdown('```\n````\n```\n<!-- factory-run: run_other -->', 'x')), 'an unclosed fence runs to the end');
  assert.ok(fails(() => assertInertMarkdown('````\nx\n`````\n<!-- factory-run: run_other -->', 'x')), 'a longer fence closes');
  assert.ok(fails(() => assertInertMarkdown('``@octocat`', 'x')), 'a span closes only at a run of its own length');
  assert.ok(fails(() => assertInertAdf({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: '@octocat' }] }] }, 'x')));
  assert.ok(fails(() => assertInertAdf({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: '1' } }] }] }, 'x')));
  assert.ok(fails(() => assertInertWiki('{noformat}\n{noformat}\n[~admin]\n{noformat}', 1, 'x')));
  assert.ok(fails(() => assertInertWiki('x https://evil.example', 0, 'x')));
});

text('a comment is the run’s only when its first words name the run; outside text never comes first', () => {
  const comment = hostileComment();
  assert.ok(isRunComment(commentMarkdown(comment), 'run_abc123'));
  assert.ok(isRunComment(commentWikiMarkup(comment), 'run_abc123'));
  assert.ok(isRunComment('Factory · run run_abc123 · pipeline x', 'run_abc123'), 'the plain text of an ADF comment');
  for (const body of [commentMarkdown(comment), commentWikiMarkup(comment), JSON.stringify(commentAdf(comment))]) {
    assert.not.ok(isRunComment(body, 'run_other'), 'a marker quoted in the output does not match');
    assert.not.ok(isRunComment(body, 'run_fake'), 'a marker in a title does not match');
  }
  assert.not.ok(isRunComment('Factory · run run_abc1234', 'run_abc123'), 'another run whose id starts the same');
  assert.not.ok(isRunComment('Quoting: Factory · run run_abc123', 'run_abc123'));
  assert.throws(() => isRunComment('x', 'run_.*'), /letters, digits/);
});

text('the run comment: names, messages, errors and outputs are outside text', () => {
  const run = {
    id: 'run_abc123', pipelineName: '@ops pipeline', status: 'failed', error: '[x](https://evil.example) failed', startedAt: 0, finishedAt: 5000,
    steps: [{ id: 'a', name: '@step <b>', status: 'failed', output: hostileOutput }],
  } as never;
  const comment = runComment(run, runUrl);
  const outside = [comment.header, ...comment.blocks.map((block) => (block.kind === 'paragraph' ? block.parts : []))].flat().filter((part) => part.kind === 'outside').map((part) => part.text);
  assert.equal(outside, ['@ops pipeline', '[x](https://evil.example) failed', '@step <b>']);
  assert.equal(comment.blocks.find((block) => block.kind === 'output'), { kind: 'output', text: hostileOutput });
  assertInertMarkdown(commentMarkdown(comment), 'run comment');
});

text('the run comment names the latest decision, whichever step made it', () => {
  const decided = (id: string, at: number, name: string, approved: boolean) => ({ id, name: id, status: approved ? 'succeeded' : 'rejected', approval: { approved, at, by: { name, via: 'github' } } });
  const run = { id: 'run_abc123', pipelineName: 'Gated', status: 'rejected', error: 'rejected', steps: [decided('second', 2000, 'Grace', false), decided('first', 1000, 'Ada', true)] } as never;
  const words = commentMarkdown(runComment(run, undefined));
  assert.match(words, /Rejected by ` Grace ` on GitHub/);
  assert.not.match(words, /Ada/);
});

text.run();

// ─── End to end: the comment each fake tracker receives ───

interface TrackerCase {
  /** Starts the fake, saves the account and a trigger, and returns how to send an issue and read its comments. */
  start(factory: TestFactory, pipelineId: string, hooks: string): Promise<{ send(title: string, description: string): Promise<number>; comments(): unknown[]; stop(): Promise<void> }>;
  check(body: unknown, blocks: number, what: string): void;
}

const githubCase: TrackerCase = {
  async start(factory, pipelineId, hooks) {
    const fake = await FakeGitHub.start();
    fake.addRepo('acme/app');
    const account = await factory.api.saveConnection({ kind: 'github', name: 'Acme', baseUrl: fake.url, token: fake.token });
    const trigger = await factory.api.saveTrigger({ name: 'T', kind: 'github', enabled: true, pipelineId, connectionId: account.id, filter: { repo: 'acme/app' }, webhookSecret: 'secret-0123456789', writeBack: { comment: true } });
    let number = 0;
    return {
      async send(title, body) {
        const issue = fake.addIssue('acme/app', { title, body });
        number = issue.number;
        return (await fake.deliver(`${hooks}/${trigger.id}`, 'issues', fake.payload('issues', 'opened', issue), { secret: 'secret-0123456789' })).status;
      },
      comments: () => fake.comments('acme/app', number).map((comment) => comment.body),
      stop: () => fake.stop(),
    };
  },
  check: (body, _blocks, what) => assertInertMarkdown(String(body), what),
};

const linearCase: TrackerCase = {
  async start(factory, pipelineId, hooks) {
    const fake = await FakeLinear.start();
    const account = await factory.api.saveConnection({ kind: 'linear', name: 'Acme', baseUrl: fake.url, token: fake.apiKey });
    const trigger = await factory.api.saveTrigger({ name: 'T', kind: 'linear', enabled: true, pipelineId, connectionId: account.id, filter: { team: 'ENG' }, webhookSecret: 'secret-0123456789', writeBack: { comment: true } });
    let issueId = '';
    return {
      async send(title, description) {
        const issue = fake.addIssue({ title, description });
        issueId = issue.id;
        return (await fake.deliver(`${hooks}/${trigger.id}`, fake.webhookPayload('create', issue), { secret: 'secret-0123456789' })).status;
      },
      comments: () => fake.comments.filter((comment) => comment.issueId === issueId).map((comment) => comment.body),
      stop: () => fake.stop(),
    };
  },
  check: (body, _blocks, what) => assertInertMarkdown(String(body), what),
};

function jiraCase(mode: 'cloud' | 'datacenter'): TrackerCase {
  return {
    async start(factory, pipelineId, hooks) {
      const fake = await FakeJira.start({ mode });
      const account = await factory.api.saveConnection({ kind: 'jira', name: 'Acme', baseUrl: fake.url, token: fake.token, ...(mode === 'cloud' ? { email: fake.email } : {}) });
      const trigger = await factory.api.saveTrigger({ name: 'T', kind: 'jira', enabled: true, pipelineId, connectionId: account.id, filter: { query: 'project = KAN' }, webhookSecret: 'secret-0123456789', writeBack: { comment: true } });
      let issue: ReturnType<FakeJira['addIssue']> | undefined;
      return {
        async send(summary, description) {
          issue = fake.addIssue({ summary, description });
          return (await fake.deliver(`${hooks}/${trigger.id}`, fake.payload('jira:issue_created', issue), { token: 'secret-0123456789' })).status;
        },
        comments: () => (issue ? fake.comments(issue).map((comment) => comment.body) : []),
        stop: () => fake.stop(),
      };
    },
    check: (body, blocks, what) => (mode === 'cloud' ? assertInertAdf(body, what) : assertInertWiki(String(body), blocks, what)),
  };
}

const trackers: [string, TrackerCase][] = [['GitHub', githubCase], ['Linear', linearCase], ['Jira Cloud', jiraCase('cloud')], ['Jira Data Center', jiraCase('datacenter')]];
const endToEnd = suite('comment text end to end');

for (const [name, tracker] of trackers) {
  endToEnd(`${name}: the approval message with a hostile title and a hostile output reach the comment inert`, async () => {
    const port = await freePort();
    const factory = await startTestFactory({ overrides: { webhookServer: { enabled: true, port } }, triggerTuning: { firstPollDelayMs: 3600_000, writeBackRetryDelaysMs: [50, 50] } });
    let fake: Awaited<ReturnType<TrackerCase['start']>> | undefined;
    try {
      const pipeline = await factory.pipeline([approval('review', 'Ship {{issue.title}}?'), shell('report', 'printf "%s\\n" "{{issue.description}}"')], { name: 'Gated' });
      fake = await tracker.start(factory, pipeline.id, `http://127.0.0.1:${port}/hooks`);
      assert.is(await fake.send(hostileTitle, hostileOutput), 201);
      const run = (await factory.api.listRuns())[0]!;
      await factory.waitForRun(run.id, ['waiting']);
      const shows = (words: string) => JSON.stringify(fake!.comments()[0] ?? '').includes(words);
      await waitFor(() => shows('waiting for approval') && shows('octocat'), 5000, 'the waiting comment with the title');
      tracker.check(fake.comments()[0], 0, `${name}, waiting`);
      await factory.api.approveStep(run.id, 'review', true);
      await factory.waitForRun(run.id, ['succeeded']);
      await waitFor(() => shows('succeeded'), 5000, 'the finished comment');
      assert.ok(shows('NOFORMAT'), 'the output is in the comment');
      tracker.check(fake.comments()[0], 1, `${name}, succeeded`);
      assert.is(fake.comments().length, 1);
    } finally {
      await factory.close();
      await fake?.stop();
    }
  });
}

endToEnd.run();

// ─── Adoption: a lost comment id is found again only among the account's own comments ───

const adoption = suite('comment adoption');

interface AdoptionCase {
  provider: TrackerProvider;
  /** The fake with one issue, the write-back target, a way to add another person's comment, and the comments' texts, oldest first. */
  start(): Promise<{ target: { connection: Connection; trigger: TriggerConfig; issue: Issue }; addOthers(text: string): void; comments(): string[]; stop(): Promise<void> }>;
}

const connectionOf = (account: Omit<ConnectionView, 'hasToken'>, token: string): Connection => ({ ...account, token }) as Connection;
const triggerOf = { id: 'trg_0123456789abcdef', name: 'T', kind: 'github', enabled: true, pipelineId: 'pip_x' } as TriggerConfig;

const adoptionCases: [string, AdoptionCase][] = [
  ['GitHub', {
    provider: githubProvider,
    async start() {
      const fake = await FakeGitHub.start();
      fake.addRepo('acme/app');
      const issue = fake.addIssue('acme/app', { title: 'Adopt?' });
      const connection = connectionOf({ id: 'con_1', kind: 'github', name: 'A', baseUrl: fake.url, account: { id: String(fake.user.id), name: fake.user.login } }, fake.token);
      return {
        target: { connection, trigger: { ...triggerOf, kind: 'github', filter: { repo: 'acme/app' } }, issue: { title: issue.title, key: `acme/app#${issue.number}`, raw: { number: issue.number } } },
        addOthers: (body) => void fake.addComment('acme/app', issue.number, body, { author: 'monalisa' }),
        comments: () => fake.comments('acme/app', issue.number).map((comment) => comment.body),
        stop: () => fake.stop(),
      };
    },
  }],
  ['Linear', {
    provider: linearProvider,
    async start() {
      const fake = await FakeLinear.start();
      const issue = fake.addIssue({ title: 'Adopt?' });
      const connection = connectionOf({ id: 'con_1', kind: 'linear', name: 'A', baseUrl: fake.url, account: { id: fake.viewer.id, name: fake.viewer.name } }, fake.apiKey);
      return {
        target: { connection, trigger: { ...triggerOf, kind: 'linear' }, issue: { title: issue.title, key: issue.identifier, raw: { id: issue.id } } },
        addOthers: (body) => void fake.addComment(issue, body),
        comments: () => fake.commentsOn(issue).map((comment) => comment.body),
        stop: () => fake.stop(),
      };
    },
  }],
  ...(['cloud', 'datacenter'] as const).map((mode): [string, AdoptionCase] => [`Jira ${mode}`, {
    provider: jiraProvider,
    async start() {
      const fake = await FakeJira.start({ mode });
      const issue = fake.addIssue({ summary: 'Adopt?' });
      const connection = connectionOf({ id: 'con_1', kind: 'jira', name: 'A', baseUrl: fake.url, ...(mode === 'cloud' ? { email: fake.email } : {}), account: { id: 'unused', name: 'A', server: mode === 'cloud' ? 'Jira Cloud' : 'Jira Data Center' } }, fake.token);
      return {
        target: { connection, trigger: { ...triggerOf, kind: 'jira', filter: { query: 'project = KAN' } }, issue: { title: issue.summary, key: issue.key } },
        addOthers: (body) => void fake.addComment(issue, body, { author: 'other' }),
        comments: () => fake.comments(issue).map((comment) => comment.text),
        stop: () => fake.stop(),
      };
    },
  }]),
];

const version = (words: string): CommentDocument => ({ runId: 'run_adopt0001', header: [{ kind: 'words', text: words }], blocks: [] });

for (const [name, tracker] of adoptionCases) {
  adoption(`${name}: a newer comment by someone else quoting the run's first line is never adopted; Factory's own is`, async () => {
    const { target, addOthers, comments, stop } = await tracker.start();
    try {
      // Someone quotes the run's first line before Factory has written anything: Factory makes its own.
      addOthers('Factory · run run_adopt0001 · quoted by someone else');
      const own = await tracker.provider.upsertComment(target, version(' · started'));
      assert.is(comments().length, 2);
      // After Factory's comment, someone else quotes it again (newer, so found first newest-first).
      addOthers('Factory · run run_adopt0001 · quoted again, later');
      // The crash window: the comment id was never stored, so it is looked for.
      assert.is(await tracker.provider.upsertComment(target, version(' · finished')), own, 'its own comment is found again');
      const all = comments();
      assert.is(all.length, 3, 'no second comment of Factory');
      assert.equal(all.filter((body) => body.includes('quoted')), ['Factory · run run_adopt0001 · quoted by someone else', 'Factory · run run_adopt0001 · quoted again, later'], 'the others’ comments are untouched');
      assert.ok(all.some((body) => body.includes('finished')));
    } finally {
      await stop();
    }
  });
}

adoption.run();
