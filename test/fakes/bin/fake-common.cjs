// Shared run-mode engine of the fake coding-agent CLIs in this folder (not a CLI itself).
// Each fake describes its CLI's real output format (PROVIDERS.md §4) as a `format` object; `runSession`
// plays a short agent session in that format, shaped by FAKE_MODE:
//   (unset)  init, an assistant text, one `ls` tool call and its result, `Done: <prompt…>`, usage; exit 0
//   error    the CLI's real error shape; exit 1
//   slow     like default, FAKE_SLOW_MS (200) between lines
//   silent   init, then nothing for FAKE_SILENT_MS (1500), then like default (with FAKE_SILENT_STATE=<file>
//            and FAKE_SILENT_TIMES=n only the first n runs are silent)
//   hang     starts a child `sleep 300` (pid on stderr as `child-pid <n>`), prints init, never exits
//   flood    init, FAKE_FLOOD_LINES (200000) assistant-text events of ~100 characters, then like default
//   garbage  like default with non-JSON lines (`not json`, `{"half":`, binary bytes) between the lines
//   json     a text-only session (no tool call) whose final answer is FAKE_ANSWER
//   offline  the CLI's errors when it cannot reach its service (format.offline, else its error
//            shape), FAKE_RETRY_MS (50) apart, then silence until it is killed; never exits
//   limit    the model provider's usage limit in the CLI's real words (format.limit, PROVIDERS.md §7),
//            resetting at FAKE_RESETS_AT (epoch seconds; default in an hour); exit 1. With
//            FAKE_LIMIT_STATE=<file> and FAKE_LIMIT_TIMES=n only the first n runs hit it, later runs
//            are like default (a resumed session that goes on)
//   spend    init, then FAKE_SPEND_TURNS (50; FAKE_SPEND_RESUMED_TURNS on a resumed session) turns of
//            FAKE_SPEND_TOKENS (1000) tokens each, FAKE_SPEND_MS (20) apart, each a line with its usage in
//            the CLI's real format (format.spend), then the final usage (format.spendEnd); exit 0
// FAKE_SIGNALS_FILE=<path> appends the name of every SIGINT and SIGTERM received (a line each); SIGINT
// then ends the run (exit 130) unless FAKE_IGNORE_SIGINT=1.
// Every mode that finishes also writes `agent-was-here.txt` (the prompt) into the working folder,
// unless FAKE_NO_WRITE=1. FAKE_ARGS_FILE=<path> appends {argv, cwd, prompt} as one JSON line per run.
// A format's `sessionId` (when set) is the session the run reports, else a new UUID.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { randomUUID } = require('crypto');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function envNumber(name, fallback) {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** The value after the first of `names` in `args` (`--flag value` or `--flag=value`), else undefined. */
function flagValue(args, names) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') break;
    for (const name of names) {
      if (args[i] === name && i + 1 < args.length) return args[i + 1];
      if (args[i].startsWith(name + '=')) return args[i].slice(name.length + 1);
    }
  }
  return undefined;
}

/** The positional arguments: not flags, not values of `valueFlags`; everything after `--`. */
function positionals(args, valueFlags) {
  const found = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return found.concat(args.slice(i + 1));
    if (valueFlags.includes(arg)) i++;
    else if (!arg.startsWith('-') || arg === '-') found.push(arg);
  }
  return found;
}

/** One output line: an object becomes a JSON line, a Buffer or string is written as it is. */
function encode(line) {
  if (Buffer.isBuffer(line)) return line;
  return typeof line === 'string' ? line : JSON.stringify(line) + '\n';
}

async function write(stream, line) {
  if (!stream.write(encode(line))) await new Promise((resolve) => stream.once('drain', resolve));
}

const garbageLines = [
  'not json\n',
  '{"half":\n',
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x1a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0xff, 0xfe, 0x01, 0x7f, 0x0a]),
  '\u001b[31mWARN\u001b[0m progress ▒▒▒▒░░ 42%\n',
];

const floodFiller = 'The quick brown fox jumps over the lazy dog while the agent streams a very long answer. ';

/** A ~100-character text for flood event `i`. */
function floodText(i) {
  const head = `Flood ${i}: `;
  return (head + floodFiller.repeat(2)).slice(0, 100);
}

/** The `ls` output of the working folder, as a shell would print it. */
function listing(cwd) {
  try {
    return fs.readdirSync(cwd).sort().join('\n');
  } catch {
    return '';
  }
}

/** Starts `sleep 300` as a child in this process group; `sleep` may not be on a test's PATH. */
function startSleeper() {
  const sleepBin = ['/bin/sleep', '/usr/bin/sleep'].find((file) => fs.existsSync(file));
  const child = sleepBin
    ? spawn(sleepBin, ['300'], { stdio: 'ignore' })
    : spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: 'ignore' });
  child.on('error', () => {});
  return child;
}

/**
 * Plays one session of `format`:
 *   init(ctx)            lines printed first (the CLI's init/system line; may be empty)
 *   body(ctx)            the rest of a successful session; ctx.tools says whether to use the tool
 *   flood(ctx, i, text)  one assistant-text event
 *   error(ctx)           { lines, stderr } of a failed run
 *   offline(ctx)         optional: { lines, stderr: [] } the CLI prints while it retries without a network
 */
/** Tests read what each invocation was given (FAKE_ARGS_FILE): one JSON line {argv, cwd, prompt} per run. */
function recordArguments(prompt) {
  if (process.env.FAKE_ARGS_FILE) fs.appendFileSync(process.env.FAKE_ARGS_FILE, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), prompt: String(prompt ?? '') }) + '\n');
}

/** Whether a mode applies to this run: always without a state file, else only to the first <timesVariable> runs counted in it. */
function firstRuns(file, timesVariable) {
  if (!file) return true;
  const count = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) || 0 : 0) + 1;
  fs.writeFileSync(file, String(count));
  return count <= envNumber(timesVariable, Infinity);
}

/** A time as Codex prints it (local, no zone): `3:05 PM`, or `Jan 5th, 2026 3:05 PM` on another day. */
function codexTime(epochSeconds) {
  const at = new Date(epochSeconds * 1000);
  const now = new Date();
  const time = at.toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', hour12: true }).replace(/\u202f/g, ' ');
  if (at.toDateString() === now.toDateString()) return time;
  const day = at.getDate();
  const suffix = day % 10 === 1 && day !== 11 ? 'st' : day % 10 === 2 && day !== 12 ? 'nd' : day % 10 === 3 && day !== 13 ? 'rd' : 'th';
  return `${at.toLocaleString('en-US', { month: 'short' })} ${day}${suffix}, ${at.getFullYear()} ${time}`;
}

/** Records SIGINT and SIGTERM in FAKE_SIGNALS_FILE; SIGINT ends the run as Ctrl-C would (unless FAKE_IGNORE_SIGINT=1), SIGTERM at once. */
function recordSignals() {
  const file = process.env.FAKE_SIGNALS_FILE;
  if (!file) return;
  process.on('SIGINT', () => {
    fs.appendFileSync(file, 'SIGINT\n');
    if (process.env.FAKE_IGNORE_SIGINT !== '1') process.exit(130);
  });
  process.on('SIGTERM', () => {
    fs.appendFileSync(file, 'SIGTERM\n');
    process.exit(143);
  });
}

async function runSession(format, prompt) {
  const mode = process.env.FAKE_MODE || 'default';
  recordSignals();
  // Tests wait for this file instead of a time: the session has started.
  if (process.env.FAKE_STARTED_FILE) fs.writeFileSync(process.env.FAKE_STARTED_FILE, String(process.pid));
  // A reader that goes away (EPIPE) ends the run quietly, as the real CLIs do on SIGPIPE.
  process.stdout.on('error', () => process.exit(process.exitCode || 0));
  const cwd = process.cwd();
  recordArguments(prompt);
  const ctx = {
    prompt: String(prompt ?? ''),
    cwd,
    sessionId: format.sessionId || randomUUID(),
    started: Date.now(),
    tools: mode !== 'json',
    answer: mode === 'json' ? process.env.FAKE_ANSWER ?? '' : 'Done: ' + String(prompt ?? '').slice(0, 60).trimEnd(),
    intro: "I'll list the files in the workspace first.",
    listing: '',
    elapsed() {
      return Math.max(1, Date.now() - this.started);
    },
  };
  const out = process.stdout;

  if (mode === 'error') {
    const failure = format.error(ctx);
    for (const line of failure.lines || []) await write(out, line);
    if (failure.stderr) process.stderr.write(failure.stderr + '\n');
    process.exitCode = 1;
    return;
  }

  if (mode === 'limit' && firstRuns(process.env.FAKE_LIMIT_STATE, 'FAKE_LIMIT_TIMES')) {
    const resetsAt = envNumber('FAKE_RESETS_AT', Math.floor(Date.now() / 1000) + 3600);
    const limit = format.limit(ctx, resetsAt);
    for (const line of limit.lines || []) await write(out, line);
    for (const line of limit.stderr || []) process.stderr.write(line + '\n');
    process.exitCode = limit.exitCode ?? 1;
    return;
  }

  if (mode === 'spend') {
    const turns = envNumber(format.sessionId && process.env.FAKE_SPEND_RESUMED_TURNS ? 'FAKE_SPEND_RESUMED_TURNS' : 'FAKE_SPEND_TURNS', 50);
    const tokens = envNumber('FAKE_SPEND_TOKENS', 1000);
    if (process.env.FAKE_NO_WRITE !== '1') fs.writeFileSync(path.join(cwd, 'agent-was-here.txt'), ctx.prompt);
    for (const line of format.init(ctx)) await write(out, line);
    for (let i = 1; i <= turns; i++) {
      await sleep(envNumber('FAKE_SPEND_MS', 20));
      for (const line of format.spend(ctx, i, tokens)) await write(out, line);
    }
    for (const line of format.spendEnd(ctx, turns * tokens)) await write(out, line);
    process.exitCode = 0;
    return;
  }

  if (mode === 'offline') {
    const offline = format.offline ? format.offline(ctx) : { ...format.error(ctx), stderr: [format.error(ctx).stderr].filter(Boolean) };
    const delay = envNumber('FAKE_RETRY_MS', 50);
    for (const line of offline.lines || []) {
      await sleep(delay);
      await write(out, line);
    }
    for (const line of offline.stderr || []) {
      await sleep(delay);
      process.stderr.write(line + '\n');
    }
    setInterval(() => {}, 60_000);
    return;
  }

  if (mode === 'hang') {
    const child = startSleeper();
    process.stderr.write(`child-pid ${child.pid}\n`);
    for (const line of format.init(ctx)) await write(out, line);
    setInterval(() => {}, 60_000);
    return;
  }

  if (process.env.FAKE_NO_WRITE !== '1') fs.writeFileSync(path.join(cwd, 'agent-was-here.txt'), ctx.prompt);
  ctx.listing = listing(cwd);

  const init = format.init(ctx);
  for (const line of init) await write(out, line);
  if (mode === 'silent' && firstRuns(process.env.FAKE_SILENT_STATE, 'FAKE_SILENT_TIMES')) await sleep(envNumber('FAKE_SILENT_MS', 1500));
  if (mode === 'flood') {
    const count = envNumber('FAKE_FLOOD_LINES', 200000);
    for (let i = 1; i <= count; i++) await write(out, format.flood(ctx, i, floodText(i)));
  }
  const delay = mode === 'slow' ? envNumber('FAKE_SLOW_MS', 200) : 0;
  const body = format.body(ctx);
  let g = 0;
  for (let i = 0; i < body.length; i++) {
    if (mode === 'garbage') await write(out, garbageLines[g++ % garbageLines.length]);
    if (delay > 0 && (i > 0 || init.length > 0)) await sleep(delay);
    await write(out, body[i]);
  }
  if (mode === 'garbage') await write(out, garbageLines[g++ % garbageLines.length]);
  process.exitCode = 0;
}

module.exports = { runSession, recordArguments, flagValue, positionals, codexTime, uuid: randomUUID };
