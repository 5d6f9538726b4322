// Output parsers: recorded streams of each coding-agent CLI (shapes from PROVIDERS.md §4) become
// readable log lines, a final answer, usage and an error; malformed lines never throw.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createParser, isOutputFormat, outputFormats, type ParsedLine, type ParseResult } from '../../src/harness/parsers/index';

/** Feeds `events` (objects are written as JSON lines, strings as they are) to a new `format` parser. */
function parse(format: string, events: (object | string)[]): { lines: string[]; result: ParseResult } {
  const parser = createParser(format);
  const lines: ParsedLine[] = [];
  for (const event of events) lines.push(...parser.push(typeof event === 'string' ? event : JSON.stringify(event)));
  return { lines: lines.map((line) => `${line.stream} ${line.text}`), result: parser.finish() };
}

const registry = suite('parser registry');

registry('lists every format and creates a parser for each', () => {
  assert.equal(outputFormats, ['text', 'claude-stream-json', 'codex-json', 'gemini-stream-json', 'opencode-json', 'cursor-stream-json', 'amp-stream-json']);
  for (const format of outputFormats) {
    assert.ok(isOutputFormat(format));
    assert.type(createParser(format).push, 'function');
  }
});

registry('rejects an unknown format with a RangeError naming the known ones', () => {
  assert.not.ok(isOutputFormat('yaml'));
  assert.not.ok(isOutputFormat('toString'));
  assert.throws(() => createParser('yaml'), (error: unknown) =>
    error instanceof RangeError && error.message.includes('`yaml`') && error.message.includes('claude-stream-json, codex-json'));
});

registry('text format shows every line and returns them joined', () => {
  const { lines, result } = parse('text', ['Hello', '', 'world']);
  assert.equal(lines, ['out Hello', 'out ', 'out world']);
  assert.equal(result, { output: 'Hello\n\nworld' });
});

const claude = suite('claude stream-json');

const claudeStream = [
  { type: 'system', subtype: 'init', session_id: 's-1', cwd: '/repo', model: 'claude-sonnet-4-5', tools: ['Bash', 'Read'], mcp_servers: [], permissionMode: 'default', apiKeySource: 'none', claude_code_version: '2.1.0' },
  { type: 'assistant', session_id: 's-1', parent_tool_use_id: null, message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: "I'll look at the files.\n" }], stop_reason: null, usage: { input_tokens: 3, output_tokens: 8 } } },
  { type: 'assistant', session_id: 's-1', parent_tool_use_id: null, message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls -la\necho more', description: 'List files' } }], stop_reason: null, usage: { input_tokens: 3, output_tokens: 8 } } },
  { type: 'user', session_id: 's-1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md\nsrc', is_error: false }] } },
  { type: 'rate_limit_event', rate_limit_info: { status: 'allowed' } },
  { type: 'assistant', session_id: 's-1', parent_tool_use_id: null, message: { id: 'msg_2', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: 'src/x.ts' } }] } },
  { type: 'user', session_id: 's-1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'File does not exist.\nMore' }], is_error: true }] } },
  { type: 'assistant', session_id: 's-1', parent_tool_use_id: null, message: { id: 'msg_3', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Done: two files.\n\nNothing else.' }] } },
  { type: 'result', subtype: 'success', is_error: false, duration_ms: 12345, duration_api_ms: 10000, num_turns: 3, result: 'Done: two files.\n\nNothing else.', session_id: 's-1', total_cost_usd: 0.0123, usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 50 }, modelUsage: {}, permission_denials: [] },
];

claude('shows text, tool calls and results, and returns the result text, usage with cache tokens, and cost', () => {
  const { lines, result } = parse('claude-stream-json', claudeStream);
  assert.equal(lines, [
    'info session s-1 · model claude-sonnet-4-5',
    "out I'll look at the files.",
    'out → Bash: ls -la',
    'out ← ok',
    'out → Read: src/x.ts',
    'out ← error: File does not exist.',
    'out Done: two files.',
    'out ',
    'out Nothing else.',
    'info done · 3 turns · 12.3 s · $0.0123',
  ]);
  assert.equal(result, { output: 'Done: two files.\n\nNothing else.', usage: { inputTokens: 3210, outputTokens: 50, costUsd: 0.0123 } });
});

claude('falls back to the last assistant message text when there is no result line', () => {
  const { result } = parse('claude-stream-json', claudeStream.slice(0, 4));
  assert.equal(result, { output: "I'll look at the files.\n" });
});

claude('reports an error result by its text, or by its subtype when it has none, and reads the older cost_usd', () => {
  const failed = parse('claude-stream-json', [
    claudeStream[1]!,
    { type: 'result', subtype: 'success', is_error: true, result: 'API Error: 401 invalid x-api-key', duration_ms: 200, num_turns: 1, session_id: 's-1', cost_usd: 0.5 },
  ]);
  assert.equal(failed.lines.at(-1), 'err error: API Error: 401 invalid x-api-key');
  assert.equal(failed.result, { output: "I'll look at the files.\n", usage: { costUsd: 0.5 }, error: 'API Error: 401 invalid x-api-key' });
  const maxTurns = parse('claude-stream-json', [{ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 10, session_id: 's-1', total_cost_usd: 1, usage: { input_tokens: 5, output_tokens: 6 } }]);
  assert.equal(maxTurns.lines, ['err error: error_max_turns']);
  assert.equal(maxTurns.result, { output: '', usage: { inputTokens: 5, outputTokens: 6, costUsd: 1 }, error: 'error_max_turns' });
});

claude('amp stream-json reads the same shapes', () => {
  const { lines, result } = parse('amp-stream-json', [
    { type: 'system', subtype: 'init', session_id: 'T-abc', tools: ['Bash'], cwd: '/repo' },
    { type: 'assistant', session_id: 'T-abc', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi' }, { type: 'tool_use', id: 't1', name: 'Grep', input: { pattern: 'TODO', path: 'src' } }] } },
    { type: 'result', subtype: 'success', is_error: false, duration_ms: 900, num_turns: 1, result: 'All good', session_id: 'T-abc' },
  ]);
  assert.equal(lines, ['info session T-abc', 'out Hi', 'out → Grep: TODO', 'info done · 1 turn · 0.9 s']);
  assert.equal(result, { output: 'All good' });
});

const codex = suite('codex exec --json');

codex('shows commands with their exit status, file changes and messages; sums usage over turns', () => {
  const { lines, result } = parse('codex-json', [
    { type: 'thread.started', thread_id: '0199-a' },
    { type: 'turn.started' },
    { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: '**Inspecting the repo**\n\nDetails' } },
    { type: 'item.started', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: '', exit_code: null, status: 'in_progress' } },
    { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: 'README.md\n', exit_code: 0, status: 'completed' } },
    { type: 'item.completed', item: { id: 'item_2', type: 'command_execution', command: 'npm test', aggregated_output: 'Error: 2 failing\nmore', exit_code: 1, status: 'failed' } },
    { type: 'item.completed', item: { id: 'item_3', type: 'file_change', changes: [{ path: 'src/a.ts', kind: 'update' }, { path: 'src/b.ts', kind: 'add' }], status: 'completed' } },
    { type: 'item.completed', item: { id: 'item_4', type: 'agent_message', text: 'First answer' } },
    { type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 20 } },
    { type: 'turn.started' },
    { type: 'item.started', item: { id: 'item_5', type: 'mcp_tool_call', server: 'docs', tool: 'search', arguments: { query: 'uvu' }, status: 'in_progress' } },
    { type: 'item.completed', item: { id: 'item_5', type: 'mcp_tool_call', server: 'docs', tool: 'search', arguments: { query: 'uvu' }, status: 'failed', error: { message: 'timeout' } } },
    { type: 'item.updated', item: { id: 'item_6', type: 'todo_list', items: [{ text: 'a', completed: true }] } },
    { type: 'item.completed', item: { id: 'item_7', type: 'agent_message', text: 'Final answer\nline two' } },
    { type: 'turn.completed', usage: { input_tokens: 300, cached_input_tokens: 100, output_tokens: 30 } },
  ]);
  assert.equal(lines, [
    'info thread 0199-a',
    'info **Inspecting the repo**',
    'out → shell: bash -lc ls',
    'out ← ok',
    'out → shell: npm test',
    'out ← error: exit 1: Error: 2 failing',
    'out → patch: update src/a.ts, add src/b.ts',
    'out ← ok',
    'out First answer',
    'out → docs.search: uvu',
    'out ← error: timeout',
    'out Final answer',
    'out line two',
  ]);
  assert.equal(result, { output: 'Final answer\nline two', usage: { inputTokens: 400, outputTokens: 50 } });
});

codex('reports turn.failed, and an error event only when no turn completed after it', () => {
  const failed = parse('codex-json', [
    { type: 'thread.started', thread_id: 't' },
    { type: 'turn.started' },
    { type: 'error', message: 'stream disconnected; retrying 1/5' },
    { type: 'turn.failed', error: { message: 'unexpected status 401 Unauthorized' } },
  ]);
  assert.equal(failed.lines, ['info thread t', 'err error: stream disconnected; retrying 1/5', 'err error: unexpected status 401 Unauthorized']);
  assert.equal(failed.result, { output: '', error: 'unexpected status 401 Unauthorized' });
  const recovered = parse('codex-json', [{ type: 'error', message: 'retrying' }, { type: 'turn.completed', usage: { input_tokens: 1, output_tokens: 2 } }]);
  assert.equal(recovered.result, { output: '', usage: { inputTokens: 1, outputTokens: 2 } });
  const lastError = parse('codex-json', [{ type: 'error', message: 'Quota exceeded' }]);
  assert.equal(lastError.result.error, 'Quota exceeded');
});

const gemini = suite('gemini stream-json');

gemini('joins delta chunks into lines and output, shows tools, and reads usage from result stats', () => {
  const time = '2025-10-10T12:00:00.000Z';
  const { lines, result } = parse('gemini-stream-json', [
    { type: 'init', timestamp: time, session_id: 'g-1', model: 'gemini-2.5-pro' },
    { type: 'message', timestamp: time, role: 'user', content: 'List the files' },
    { type: 'message', timestamp: time, role: 'assistant', content: 'Let me ', delta: true },
    { type: 'message', timestamp: time, role: 'assistant', content: 'check.\nOne', delta: true },
    { type: 'message', timestamp: time, role: 'assistant', content: ' moment.', delta: true },
    { type: 'tool_use', timestamp: time, tool_name: 'run_shell_command', tool_id: 'c1', parameters: { command: 'ls' } },
    { type: 'tool_result', timestamp: time, tool_id: 'c1', status: 'success', output: 'a\nb' },
    { type: 'tool_use', timestamp: time, tool_name: 'read_file', tool_id: 'c2', parameters: { absolute_path: '/repo/x.ts' } },
    { type: 'tool_result', timestamp: time, tool_id: 'c2', status: 'error', error: { type: 'FILE_NOT_FOUND', message: 'File not found: /repo/x.ts' } },
    { type: 'message', timestamp: time, role: 'assistant', content: ' Two files.', delta: true },
    { type: 'result', timestamp: time, status: 'success', stats: { total_tokens: 130, input_tokens: 100, output_tokens: 30, cached: 20, input: 80, duration_ms: 4200, tool_calls: 2 } },
  ]);
  assert.equal(lines, [
    'info session g-1 · model gemini-2.5-pro',
    'out Let me check.',
    'out One moment.',
    'out → run_shell_command: ls',
    'out ← ok',
    'out → read_file: /repo/x.ts',
    'out ← error: File not found: /repo/x.ts',
    'out  Two files.',
    'info done · 2 tool calls · 4.2 s',
  ]);
  assert.equal(result, { output: 'Let me check.\nOne moment. Two files.', usage: { inputTokens: 100, outputTokens: 30 } });
});

gemini('reports an error result and error events, but not warnings', () => {
  const { lines, result } = parse('gemini-stream-json', [
    { type: 'message', role: 'assistant', content: 'Whole message' },
    { type: 'message', role: 'assistant', content: 'Second' },
    { type: 'error', severity: 'warning', message: 'Loop risk' },
    { type: 'error', severity: 'error', message: 'Quota exceeded' },
    { type: 'result', status: 'error', error: { type: 'FatalTurnLimitedError', message: 'Reached max session turns' }, stats: { input_tokens: 5, output_tokens: 1 } },
  ]);
  assert.equal(lines, ['out Whole message', 'out Second', 'err error: Loop risk', 'err error: Quota exceeded', 'err error: Reached max session turns']);
  assert.equal(result, { output: 'Whole message\nSecond', usage: { inputTokens: 5, outputTokens: 1 }, error: 'Reached max session turns' });
  assert.equal(parse('gemini-stream-json', [{ type: 'error', severity: 'error', message: 'Quota exceeded' }]).result.error, 'Quota exceeded');
});

const opencode = suite('opencode --format json');

opencode('shows text and tools, returns the last step text, and sums tokens with cache and reasoning, and cost', () => {
  const base = { timestamp: 1760000000000, sessionID: 'ses_1' };
  const { lines, result } = parse('opencode-json', [
    { ...base, type: 'step_start', part: { type: 'step-start' } },
    { ...base, type: 'text', part: { type: 'text', text: 'Checking.' } },
    { ...base, type: 'tool_use', part: { type: 'tool', tool: 'bash', callID: 'c1', state: { status: 'completed', input: { command: 'ls', description: 'list' }, output: 'a' } } },
    { ...base, type: 'tool_use', part: { type: 'tool', tool: 'read', callID: 'c2', state: { status: 'error', input: { filePath: '/repo/x.ts' }, error: 'File not found' } } },
    { ...base, type: 'step_finish', part: { type: 'step-finish', reason: 'tool-calls', cost: 0.01, tokens: { input: 100, output: 10, reasoning: 5, cache: { read: 50, write: 0 } } } },
    { ...base, type: 'step_start', part: { type: 'step-start' } },
    { ...base, type: 'reasoning', part: { type: 'reasoning', text: 'Summing up\nmore' } },
    { ...base, type: 'text', part: { type: 'text', text: 'Two files:\na and b.' } },
    { ...base, type: 'step_finish', part: { type: 'step-finish', reason: 'stop', cost: 0.02, tokens: { input: 200, output: 20, reasoning: 0, cache: { read: 0, write: 30 } } } },
    { ...base, type: 'step_start', part: { type: 'step-start' } },
    { ...base, type: 'step_finish', part: { type: 'step-finish', reason: 'stop', cost: 0, tokens: { input: 1, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } } },
  ]);
  assert.equal(lines, ['out Checking.', 'out → bash: ls', 'out ← ok', 'out → read: /repo/x.ts', 'out ← error: File not found', 'info Summing up', 'out Two files:', 'out a and b.']);
  assert.equal(result, { output: 'Two files:\na and b.', usage: { inputTokens: 381, outputTokens: 35, costUsd: 0.03 } });
});

opencode('reports an error event by its data message', () => {
  const { lines, result } = parse('opencode-json', [
    { type: 'error', timestamp: 1, sessionID: 'ses_1', error: { name: 'ProviderAuthError', data: { providerID: 'anthropic', message: 'Missing API key' } } },
  ]);
  assert.equal(lines, ['err error: Missing API key']);
  assert.equal(result, { output: '', error: 'Missing API key' });
});

const cursor = suite('cursor stream-json');

cursor('shows text and tool calls by kind, and returns the result text without usage', () => {
  const { lines, result } = parse('cursor-stream-json', [
    { type: 'system', subtype: 'init', apiKeySource: 'env', cwd: '/repo', session_id: 'c-1', model: 'Claude 4 Sonnet', permissionMode: 'default' },
    { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'List files' }] }, session_id: 'c-1' },
    { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Listing now.' }] }, session_id: 'c-1' },
    { type: 'tool_call', subtype: 'started', call_id: 'call_1', tool_call: { shellToolCall: { args: { command: 'ls', workingDirectory: '' } } }, session_id: 'c-1' },
    { type: 'tool_call', subtype: 'completed', call_id: 'call_1', tool_call: { shellToolCall: { args: { command: 'ls' }, result: { success: { exitCode: 0, stdout: 'a\n', stderr: '' } } } }, session_id: 'c-1' },
    { type: 'tool_call', subtype: 'started', call_id: 'call_2', tool_call: { readToolCall: { args: { path: 'src/x.ts' } } }, session_id: 'c-1' },
    { type: 'tool_call', subtype: 'completed', call_id: 'call_2', tool_call: { readToolCall: { args: { path: 'src/x.ts' }, result: { error: { errorMessage: 'File not found' } } } }, session_id: 'c-1' },
    { type: 'tool_call', subtype: 'completed', call_id: 'call_3', tool_call: { shellToolCall: { args: { command: 'false' }, result: { success: { exitCode: 1, stdout: '', stderr: 'boom\n' } } } }, session_id: 'c-1' },
    { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'One file: a.' }] }, session_id: 'c-1' },
    { type: 'result', subtype: 'success', is_error: false, duration_ms: 5000, duration_api_ms: 5000, result: 'Listing now.One file: a.', session_id: 'c-1', request_id: 'r-1' },
  ]);
  assert.equal(lines, [
    'info session c-1 · model Claude 4 Sonnet',
    'out Listing now.',
    'out → Shell: ls',
    'out ← ok',
    'out → Read: src/x.ts',
    'out ← error: File not found',
    'out ← error: exit 1: boom',
    'out One file: a.',
    'info done · 5.0 s',
  ]);
  assert.equal(result, { output: 'Listing now.One file: a.' });
});

cursor('without a result line returns the last assistant text and no error (stderr tells)', () => {
  const { result } = parse('cursor-stream-json', [
    { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Partial' }] }, session_id: 'c-1' },
  ]);
  assert.equal(result, { output: 'Partial' });
});

const reported = suite('reported errors');

/** The `error` marks of the lines `events` stand for, in order. */
function reportedErrors(format: string, events: object[]): string[] {
  const parser = createParser(format);
  return events.flatMap((event) => parser.push(JSON.stringify(event))).flatMap((line) => (line.error === undefined ? [] : [line.error]));
}

reported('each parser marks the lines of errors the CLI reported with their message, as they come', () => {
  assert.equal(reportedErrors('codex-json', [
    { type: 'turn.started' },
    { type: 'error', message: 'Reconnecting... 2/5 (stream disconnected before completion)' },
    { type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Falling back from WebSockets to HTTPS transport.' } },
    { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'false', exit_code: 1, status: 'failed' } },
    { type: 'turn.failed', error: { message: 'stream error' } },
  ]), ['Reconnecting... 2/5 (stream disconnected before completion)', 'Falling back from WebSockets to HTTPS transport.', 'stream error']);
  assert.equal(reportedErrors('claude-stream-json', [{ type: 'result', subtype: 'error_during_execution', is_error: true, result: 'API Error: 529 overloaded' }]), ['API Error: 529 overloaded']);
  assert.equal(reportedErrors('amp-stream-json', [{ type: 'result', subtype: 'error_max_turns', is_error: true }]), ['error_max_turns']);
  assert.equal(reportedErrors('gemini-stream-json', [
    { type: 'error', severity: 'warning', message: 'Loop detected, continuing' },
    { type: 'error', severity: 'error', message: 'Quota exceeded' },
  ]), ['Quota exceeded']);
  assert.equal(reportedErrors('opencode-json', [{ type: 'error', error: { name: 'ProviderAuthError', data: { message: 'No API key' } } }]), ['No API key']);
  assert.equal(reportedErrors('cursor-stream-json', [{ type: 'result', subtype: 'error', is_error: true, result: 'Rate limited' }]), ['Rate limited']);
  assert.equal(reportedErrors('codex-json', [{ type: 'item.completed', item: { id: 'a', type: 'agent_message', text: 'An error happened in your code' } }]), []);
});

const malformed = suite('malformed lines');

const jsonFormats = outputFormats.filter((format) => format !== 'text');

malformed('shows text that is not JSON, JSON that is not an object, and unknown shapes as plain lines', () => {
  const odd = ['plain words', '{"type":"assistant", broken', 'null', '42', '"text"', '[1,2]', '{}', '{"type":null}', '{"type":"unknown"}'];
  for (const format of jsonFormats) {
    const { lines } = parse(format, odd);
    assert.equal(lines, odd.map((line) => `out ${line}`), format);
  }
});

malformed('shows known types with the wrong shape as plain lines, and never throws', () => {
  const wrongShapes: Record<string, string[]> = {
    'claude-stream-json': ['{"type":"assistant","message":null}', '{"type":"assistant","message":{"content":7}}', '{"type":"user"}'],
    'amp-stream-json': ['{"type":"assistant"}'],
    'codex-json': ['{"type":"item.completed","item":null}', '{"type":"item.started","item":{"type":7}}'],
    'gemini-stream-json': ['{"type":"message","role":"assistant","content":null}'],
    'opencode-json': ['{"type":"text","part":null}', '{"type":"text","part":{"text":5}}'],
    'cursor-stream-json': ['{"type":"tool_call","tool_call":null}', '{"type":"assistant","message":{"content":"x"}}'],
  };
  for (const [format, lines] of Object.entries(wrongShapes)) {
    assert.equal(parse(format, lines).lines, lines.map((line) => `out ${line}`), format);
  }
});

malformed('survives nulls inside known shapes and returns an empty result', () => {
  const nulls = [
    '{"type":"system","subtype":"init","session_id":null,"model":null}',
    '{"type":"assistant","message":{"id":null,"content":[null,{"type":"text","text":null},{"type":"tool_use","name":null,"input":null}]}}',
    '{"type":"user","message":{"content":[null,{"type":"tool_result","content":null,"is_error":true}]}}',
    '{"type":"result","subtype":null,"result":null,"usage":{"input_tokens":null}}',
    '{"type":"item.completed","item":{"type":"command_execution","command":null,"exit_code":null}}',
    '{"type":"turn.completed","usage":null}',
    '{"type":"tool_use","tool_name":null,"parameters":null}',
    '{"type":"result","status":null,"stats":null}',
    '{"type":"tool_use","part":{"state":null}}',
    '{"type":"step_finish","part":{"tokens":null,"cost":null}}',
    '{"type":"error","error":null}',
    '{"type":"tool_call","subtype":"completed","tool_call":{"shellToolCall":{"result":null}}}',
  ];
  for (const format of jsonFormats) {
    const parser = createParser(format);
    for (const line of nulls) assert.ok(Array.isArray(parser.push(line)), `${format}: ${line}`);
    const result = parser.finish();
    assert.type(result.output, 'string', format);
    assert.equal(parser.finish(), result, `${format} finish twice`);
  }
});

malformed('keeps a huge line intact and cuts a huge tool input to one short summary', () => {
  const huge = 'x'.repeat(1_000_000);
  for (const format of jsonFormats) assert.equal(parse(format, [huge]).lines, [`out ${huge}`], format);
  const { lines } = parse('claude-stream-json', [
    { type: 'assistant', message: { id: 'm', content: [{ type: 'tool_use', name: 'Write', input: { file_path: huge } }] } },
    { type: 'user', message: { content: [{ type: 'tool_result', content: huge, is_error: true }] } },
  ]);
  assert.equal(lines[0]!.length, 'out → Write: '.length + 200);
  assert.ok(lines[0]!.endsWith('x…'));
  assert.equal(lines[1]!.length, 'out ← error: '.length + 200);
});

malformed('ignores blank lines in JSON formats', () => {
  for (const format of jsonFormats) assert.equal(parse(format, ['', '   ']).lines, [], format);
});

registry.run();
claude.run();
codex.run();
gemini.run();
opencode.run();
cursor.run();
reported.run();
malformed.run();
