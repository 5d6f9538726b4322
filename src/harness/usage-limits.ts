// The model provider's own rate or usage limit, as each agent CLI reports it (PROVIDERS.md §7), and
// when the CLI says it resets. Only lines in an error's place count: a `rate_limit_event` whose
// status is `rejected`, an assistant line with `"error":"rate_limit"`, an error result with
// `api_error_status: 429` (Claude Code); an `error` or `turn.failed` event saying "hit your usage
// limit" (Codex); an error result or error event with 429 / RESOURCE_EXHAUSTED / TerminalQuotaError
// (Gemini); and a whole line in one of those words on stderr or in text output. An agent that merely
// prints these words in its answer or a tool's output (it may be working on this very code) is not
// rate limited. The engine acts on a limit only when the CLI also failed (agent-step.ts).
//
// Reset times, best first: Claude's `resetsAt` (epoch seconds); Codex's `resets_at` or
// `resets_in_seconds`; Gemini's RetryInfo `retryDelay` or "Please retry in 41.2s"; else the time in
// the words: Claude's `· resets 3pm (Europe/Berlin)` / `Jan 5, 3:30pm (UTC)` (en-US, the zone named),
// Codex's `Try again at 3:05 PM.` / `Jan 5th, 2026 3:05 PM.` (the machine's local time, no zone).

import { asArray, asNumber, asObject, asString, type JsonObject } from './parsers/fields';

/** A limit the CLI reported. */
export interface UsageLimitHit {
  /** When the provider says the limit resets (epoch ms); undefined when it names no time. */
  resetsAt?: number;
  /** The CLI's words, one line (e.g. `You've hit your session limit · resets 3pm (UTC)`). */
  message: string;
}

/** Cheap test first: a line without any of these cannot be a limit (most lines of a busy agent). */
const mightBeLimit = /rate_limit|usage limit|usage_limit|RESOURCE_EXHAUSTED|QuotaError|quota|\b429\b/i;

/** Claude Code's rate_limit_event types in words (the CLI's own names for them). */
const claudeLimitNames: Readonly<Record<string, string>> = {
  five_hour: 'session limit',
  seven_day: 'weekly limit',
  seven_day_opus: 'Opus limit',
  seven_day_sonnet: 'Sonnet limit',
  seven_day_overage_included: 'weekly limit',
  overage: 'usage limit',
};

const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** The longest message kept, in characters. */
const maxMessageLength = 300;

/**
 * Reads the lines of one CLI run and keeps the last limit it reported. `now` is the clock the
 * reset times in words are read against; `timeZone` is the machine's (IANA name) for Codex's local
 * times, by default the process's own.
 */
export class UsageLimitWatcher {
  private latest: UsageLimitHit | undefined;
  /** A reset time the CLI gave as a number (epoch, delay): the words' time, read to the minute, never replaces it. */
  private exactResetsAt: number | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly timeZone: string = Intl.DateTimeFormat().resolvedOptions().timeZone,
  ) {}

  /** One line of stdout or stderr, without its line feed. Never throws. */
  see(line: string): void {
    if (!mightBeLimit.test(line)) return;
    try {
      const hit = this.read(line.trim());
      if (!hit) return;
      if (hit.exact) this.exactResetsAt = hit.resetsAt;
      // A later line without a time (the result after the rate_limit_event) keeps the time already known.
      this.latest = { message: hit.message, resetsAt: this.exactResetsAt ?? hit.resetsAt ?? this.latest?.resetsAt };
    } catch {
      // A malformed line is no limit.
    }
  }

  /** The limit reported, or undefined. */
  get hit(): UsageLimitHit | undefined {
    if (!this.latest) return undefined;
    return this.latest.resetsAt === undefined ? { message: this.latest.message } : this.latest;
  }

  private read(line: string): ReadHit | undefined {
    if (line.startsWith('{')) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return undefined;
      }
      const event = asObject(value);
      return event ? this.readEvent(event) : undefined;
    }
    return this.readText(line.replace(/^(error|ERROR):\s*/, ''));
  }

  /** A structured event of Claude Code, Codex or Gemini. */
  private readEvent(event: JsonObject): ReadHit | undefined {
    switch (event.type) {
      case 'rate_limit_event': {
        const info = asObject(event.rate_limit_info);
        if (info?.status !== 'rejected') return undefined;
        const seconds = asNumber(info.resetsAt);
        const name = claudeLimitNames[asString(info.rateLimitType) ?? ''] ?? 'usage limit';
        return { message: `You've hit your ${name}`, ...(seconds !== undefined ? { resetsAt: seconds * 1000, exact: true } : {}) };
      }
      case 'assistant': {
        if (event.error !== 'rate_limit') return undefined;
        const blocks = asArray(asObject(event.message)?.content).map((block) => asString(asObject(block)?.text) ?? '');
        return this.fromWords(blocks.join(' ').trim() || 'rate limited');
      }
      case 'result': {
        if (event.is_error === true && asNumber(event.api_error_status) === 429) return this.fromWords(asString(event.result) ?? 'rate limited (429)');
        if (event.status === 'error') return this.fromGemini(event.error);
        const text = asString(event.result);
        return text && event.is_error === true ? this.readText(text) : undefined;
      }
      case 'error':
        return event.severity === 'warning' ? undefined : this.fromCodexOrGemini(asString(event.message));
      case 'turn.failed':
        return this.fromCodexOrGemini(asString(asObject(event.error)?.message));
      default:
        return undefined;
    }
  }

  private fromCodexOrGemini(message: string | undefined): ReadHit | undefined {
    if (!message) return undefined;
    return this.readText(message) ?? this.fromGemini({ message });
  }

  /** Gemini's error (a result's `error`, or an error event's message): a quota error, with its retry delay. */
  private fromGemini(value: unknown): ReadHit | undefined {
    const error = asObject(value);
    const message = asString(error?.message) ?? '';
    if (error?.type !== 'TerminalQuotaError' && !/RESOURCE_EXHAUSTED|exhausted your (daily )?quota|\b429\b.*(quota|rate)/i.test(message)) return undefined;
    return { message: oneLine(message || 'quota exhausted'), ...retryDelayReset(message, this.now()) };
  }

  /** A line of words: each CLI's limit message, or undefined. */
  private readText(text: string): ReadHit | undefined {
    const old = /^Claude AI usage limit reached\|(\d{9,13})/.exec(text);
    if (old) {
      const epoch = Number(old[1]);
      return { message: 'Claude AI usage limit reached', resetsAt: epoch < 1e12 ? epoch * 1000 : epoch, exact: true };
    }
    const normalised = text.replace(/\u2019/g, "'");
    if (/^You've hit your .*· resets /.test(normalised) || /^You've hit your (session|weekly|Opus|Sonnet|usage) limit$/.test(normalised)) return this.fromWords(text);
    if (/hit your usage limit|usage_limit_reached/i.test(normalised)) {
      const at = /try again at (.+?)\.?\s*$/i.exec(normalised.split(/\n/)[0]!)?.[1];
      return { message: oneLine(text), ...codexReset(normalised, at, this.now(), this.timeZone) };
    }
    if (/^\[API Error: .*(RESOURCE_EXHAUSTED|exhausted your (daily )?quota)/.test(text) || /TerminalQuotaError/.test(text)) {
      return { message: oneLine(text), ...retryDelayReset(text, this.now()) };
    }
    return undefined;
  }

  /** Claude Code's words `You've hit your … · resets <time> (<zone>)`, with the time read where it is there. */
  private fromWords(text: string): UsageLimitHit {
    const resets = /·\s*resets\s+(.+?)(?:\s*\(([^)]+)\))?\s*$/.exec(text);
    const resetsAt = resets ? readClockTime(resets[1]!, validZone(resets[2]) ?? this.timeZone, this.now()) : undefined;
    return { message: oneLine(text), ...(resetsAt !== undefined ? { resetsAt } : {}) };
  }
}

/** What one line says: the limit, and whether its reset time is exact (a number, not words read to the minute). */
type ReadHit = UsageLimitHit & { exact?: boolean };

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > maxMessageLength ? `${line.slice(0, maxMessageLength - 1)}…` : line;
}

/** Codex: `resets_at` (epoch seconds) or `resets_in_seconds` in the error body, else `Try again at <t>`. */
function codexReset(text: string, at: string | undefined, now: number, timeZone: string): { resetsAt?: number; exact?: boolean } {
  const epoch = /"resets_at"\s*:\s*(\d{9,11})/.exec(text)?.[1];
  if (epoch) return { resetsAt: Number(epoch) * 1000, exact: true };
  const inSeconds = /"resets_in_seconds"\s*:\s*(\d+)/.exec(text)?.[1];
  if (inSeconds) return { resetsAt: now + Number(inSeconds) * 1000, exact: true };
  const resetsAt = at ? readClockTime(at, timeZone, now) : undefined;
  return resetsAt !== undefined ? { resetsAt } : {};
}

/** Gemini: RetryInfo's `retryDelay: "41s"` in the error body, or `Please retry in 41.2s`. */
function retryDelayReset(text: string, now: number): { resetsAt?: number; exact?: boolean } {
  const seconds = /retryDelay\\?"?\s*:\s*\\?"?(\d+(?:\.\d+)?)s/.exec(text)?.[1] ?? /retry in (\d+(?:\.\d+)?)\s*s\b/i.exec(text)?.[1];
  return seconds !== undefined ? { resetsAt: now + Math.ceil(Number(seconds) * 1000), exact: true } : {};
}

function validZone(name: string | undefined): string | undefined {
  if (!name) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name;
  } catch {
    return undefined;
  }
}

/**
 * A wall-clock time in words, as the CLIs print it, to epoch ms in `timeZone`: `3pm`, `3:30pm`,
 * `3:05 PM`, with an optional date before it (`Jan 5,` / `Jan 5, 2027,` / `Jan 5th, 2026`). A time
 * without a date is its next occurrence after `now`; a date without a year is this year's, or next
 * year's when that is more than a day past. Undefined when the words are not such a time.
 */
export function readClockTime(words: string, timeZone: string, now: number): number | undefined {
  const match = /^(?:([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?)?(\d{1,2})(?::(\d{2}))?[\s\u202f]*([ap])\.?m\.?$/i.exec(words.trim());
  if (!match) return undefined;
  const [, monthName, dayText, yearText, hourText, minuteText, half] = match;
  const hour12 = Number(hourText);
  const minute = Number(minuteText ?? 0);
  if (hour12 < 1 || hour12 > 12 || minute > 59) return undefined;
  const hour = (hour12 % 12) + (half!.toLowerCase() === 'p' ? 12 : 0);
  const today = wallClockDate(now, timeZone);
  if (monthName === undefined) {
    const at = zonedEpoch({ ...today, hour, minute }, timeZone);
    // The CLIs print the minute (seconds dropped): this minute is now, not tomorrow.
    if (at > now - 60_000) return at;
    const tomorrow = wallClockDate(now + 24 * 3600_000, timeZone);
    return zonedEpoch({ ...tomorrow, hour, minute }, timeZone);
  }
  const month = months.indexOf(monthName.toLowerCase()) + 1;
  const day = Number(dayText);
  if (month === 0 || day < 1 || day > 31) return undefined;
  if (yearText) return zonedEpoch({ year: Number(yearText), month, day, hour, minute }, timeZone);
  const thisYear = zonedEpoch({ year: today.year, month, day, hour, minute }, timeZone);
  return thisYear >= now - 24 * 3600_000 ? thisYear : zonedEpoch({ year: today.year + 1, month, day, hour, minute }, timeZone);
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, found);
  }
  return found;
}

/** The wall clock in `timeZone` at `epoch`. */
function wallClockAt(epoch: number, timeZone: string): WallClock & { second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(epoch)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! % 24, minute: parts.minute!, second: parts.second! };
}

function wallClockDate(epoch: number, timeZone: string): { year: number; month: number; day: number } {
  const { year, month, day } = wallClockAt(epoch, timeZone);
  return { year, month, day };
}

/** How far `timeZone`'s wall clock is ahead of UTC at `epoch`, in ms. */
function zoneOffset(epoch: number, timeZone: string): number {
  const wall = wallClockAt(epoch, timeZone);
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - Math.floor(epoch / 1000) * 1000;
}

/** The epoch ms at which `timeZone`'s wall clock shows `wall` (the later offset across a change of offset). */
function zonedEpoch(wall: WallClock, timeZone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  const first = asUtc - zoneOffset(asUtc, timeZone);
  return asUtc - zoneOffset(first, timeZone);
}
