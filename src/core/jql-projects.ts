// What of a Jira query Factory can check itself. Jira's webhooks are not filtered by the trigger's
// JQL (Jira runs JQL, Factory does not), so a site-wide webhook would let issues of every project
// start runs. The project is the one condition that is easy to read safely: when the query is a
// conjunction (top-level AND) with plain `project = X` or `project in (A, B)` parts, every issue
// it matches is in those projects. Anything else (an OR at the top level, a function, NOT,
// parentheses around the project part) gives no check: reading JQL wrongly would refuse issues
// the query matches, so when unsure nothing is derived.

type Token = { kind: 'word' | 'string' | 'symbol'; text: string };

const symbolPattern = /^(?:!=|!~|<=|>=|&&|\|\||[=~<>!&|(),])/;

/** JQL split into words, quoted strings (unescaped) and symbols; undefined when a quote is not closed. */
function tokenize(query: string): Token[] | undefined {
  const tokens: Token[] = [];
  for (let at = 0; at < query.length;) {
    const rest = query.slice(at);
    const space = /^\s+/.exec(rest);
    if (space) {
      at += space[0].length;
      continue;
    }
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      let value = '';
      let end = 1;
      for (; end < rest.length && rest[end] !== quote; end++) value += rest[end] === '\\' ? rest[++end] ?? '' : rest[end];
      if (end >= rest.length) return undefined;
      tokens.push({ kind: 'string', text: value });
      at += end + 1;
      continue;
    }
    const symbol = symbolPattern.exec(rest);
    const word = symbol ? undefined : /^[^\s"'=!~<>&|(),]+/.exec(rest);
    tokens.push(symbol ? { kind: 'symbol', text: symbol[0] } : { kind: 'word', text: word![0] });
    at += (symbol ?? word)![0].length;
  }
  return tokens;
}

const isWord = (token: Token | undefined, word: string) => token?.kind === 'word' && token.text.toLowerCase() === word;
const isValue = (token: Token | undefined) => token !== undefined && (token.kind === 'string' || (token.kind === 'word' && !['empty', 'null'].includes(token.text.toLowerCase())));

/** The projects of one plain `project = X` / `project in (A, B)` part, or undefined for any other part. */
function projectsOf(part: Token[]): string[] | undefined {
  if (!isWord(part[0], 'project')) return undefined;
  if (part[1]?.text === '=' && part.length === 3 && isValue(part[2])) return [part[2]!.text];
  if (!isWord(part[1], 'in') || part[2]?.text !== '(' || part.at(-1)?.text !== ')') return undefined;
  const values: string[] = [];
  for (let index = 3; index < part.length - 1; index += 2) {
    if (!isValue(part[index]) || (index + 1 < part.length - 1 && part[index + 1]!.text !== ',')) return undefined;
    values.push(part[index]!.text);
  }
  return values.length > 0 && part.length === 3 + values.length * 2 ? values : undefined;
}

/**
 * The projects (keys, names or ids, as written) an issue matched by `query` must be in, read from
 * its plain top-level `project = X` and `project in (A, B)` parts joined by AND (several parts:
 * the projects all of them name). Undefined when no such check can be derived: no plain project
 * part, an OR at the top level, or JQL this reader does not follow. `ORDER BY` is ignored.
 */
export function jqlProjects(query: string): string[] | undefined {
  const tokens = tokenize(query);
  if (!tokens) return undefined;
  const parts: Token[][] = [[]];
  let depth = 0;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (depth === 0 && isWord(token, 'order') && isWord(tokens[index + 1], 'by')) break;
    if (token.text === '(' && token.kind === 'symbol') depth += 1;
    if (token.text === ')' && token.kind === 'symbol') depth -= 1;
    if (depth < 0) return undefined;
    if (depth === 0 && (isWord(token, 'or') || (token.kind === 'symbol' && ['||', '|'].includes(token.text)))) return undefined;
    if (depth === 0 && (isWord(token, 'and') || (token.kind === 'symbol' && ['&&', '&'].includes(token.text)))) parts.push([]);
    else parts.at(-1)!.push(token);
  }
  if (depth !== 0) return undefined;
  let projects: string[] | undefined;
  for (const part of parts) {
    const named = projectsOf(part);
    if (named) projects = projects ? projects.filter((project) => named.some((other) => other.toLowerCase() === project.toLowerCase())) : named;
  }
  return projects;
}
