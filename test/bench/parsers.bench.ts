// Output parser benchmarks (figures, not tests): each format's parser over a generated 100,000-line
// stream that mixes assistant text, tool calls and tool results, in lines per second.
import { createParser, outputFormats } from '../../src/harness/parsers/index';

const lineCount = 100_000;
const paragraph = 'The change touches the parser registry and its tests; nothing else moves.';

/** Line `index` of a stream: a third assistant text, a third tool calls, a third tool results. */
const generators: Record<string, (index: number) => object | string> = {
  text: (index) => `${paragraph} (${index})`,
  'claude-stream-json': (index) => {
    if (index % 3 === 0) return { type: 'assistant', session_id: 's', message: { id: `msg_${index}`, role: 'assistant', content: [{ type: 'text', text: `${paragraph}\nLine ${index}` }] } };
    if (index % 3 === 1) return { type: 'assistant', session_id: 's', message: { id: `msg_${index}`, role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${index}`, name: 'Bash', input: { command: `grep -rn TODO src/${index}` } }] } };
    return { type: 'user', session_id: 's', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${index}`, content: 'src/a.ts:1: TODO\nsrc/b.ts:2: TODO', is_error: index % 30 === 2 }] } };
  },
  'codex-json': (index) => {
    if (index % 3 === 0) return { type: 'item.completed', item: { id: `item_${index}`, type: 'agent_message', text: `${paragraph}\nLine ${index}` } };
    if (index % 3 === 1) return { type: 'item.started', item: { id: `item_${index}`, type: 'command_execution', command: `grep -rn TODO src/${index}`, aggregated_output: '', exit_code: null, status: 'in_progress' } };
    return { type: 'item.completed', item: { id: `item_${index - 1}`, type: 'command_execution', command: 'grep', aggregated_output: 'src/a.ts:1: TODO\n', exit_code: index % 30 === 2 ? 1 : 0, status: 'completed' } };
  },
  'gemini-stream-json': (index) => {
    const timestamp = '2025-10-10T12:00:00.000Z';
    if (index % 3 === 0) return { type: 'message', timestamp, role: 'assistant', content: `${paragraph} ${index}\n`, delta: true };
    if (index % 3 === 1) return { type: 'tool_use', timestamp, tool_name: 'run_shell_command', tool_id: `c${index}`, parameters: { command: `grep -rn TODO src/${index}` } };
    return { type: 'tool_result', timestamp, tool_id: `c${index - 1}`, status: index % 30 === 2 ? 'error' : 'success', output: 'src/a.ts:1: TODO' };
  },
  'opencode-json': (index) => {
    const base = { timestamp: 1760000000000 + index, sessionID: 'ses_1' };
    if (index % 3 === 0) return { ...base, type: 'text', part: { type: 'text', text: `${paragraph}\nLine ${index}` } };
    if (index % 3 === 1) return { ...base, type: 'tool_use', part: { type: 'tool', tool: 'bash', callID: `c${index}`, state: { status: 'completed', input: { command: `grep -rn TODO src/${index}` }, output: 'src/a.ts:1: TODO' } } };
    return { ...base, type: 'step_finish', part: { type: 'step-finish', reason: 'tool-calls', cost: 0.001, tokens: { input: 100, output: 10, reasoning: 0, cache: { read: 50, write: 0 } } } };
  },
  'cursor-stream-json': (index) => {
    if (index % 3 === 0) return { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: `${paragraph}\nLine ${index}` }] }, session_id: 'c' };
    if (index % 3 === 1) return { type: 'tool_call', subtype: 'started', call_id: `call_${index}`, tool_call: { shellToolCall: { args: { command: `grep -rn TODO src/${index}` } } }, session_id: 'c' };
    return { type: 'tool_call', subtype: 'completed', call_id: `call_${index - 1}`, tool_call: { shellToolCall: { args: { command: 'grep' }, result: { success: { exitCode: index % 30 === 2 ? 1 : 0, stdout: 'src/a.ts:1: TODO\n', stderr: '' } } } }, session_id: 'c' };
  },
};
generators['amp-stream-json'] = generators['claude-stream-json']!;

console.log(`Output parsers over ${lineCount.toLocaleString('en')} generated lines (text, tool calls, results), best of 3:`);
for (const format of outputFormats) {
  const generate = generators[format]!;
  const lines = Array.from({ length: lineCount }, (_, index) => {
    const event = generate(index);
    return typeof event === 'string' ? event : JSON.stringify(event);
  });
  const megabytes = lines.reduce((sum, line) => sum + line.length + 1, 0) / 1e6;
  let best = Infinity;
  let logLines = 0;
  for (let round = 0; round < 3; round++) {
    const parser = createParser(format);
    const started = performance.now();
    logLines = 0;
    for (const line of lines) logLines += parser.push(line).length;
    parser.finish();
    best = Math.min(best, performance.now() - started);
  }
  const perSecond = Math.round(lineCount / (best / 1000));
  console.log(`  ${format.padEnd(20)} ${perSecond.toLocaleString('en').padStart(11)} lines/s  ${best.toFixed(0).padStart(5)} ms  ${(megabytes / (best / 1000)).toFixed(0).padStart(4)} MB/s  (${megabytes.toFixed(1)} MB, ${logLines.toLocaleString('en')} log lines)`);
}
