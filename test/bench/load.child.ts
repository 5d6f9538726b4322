// A small HTTP load generator, run as its own process so it does not share the server's event loop.
// argv: <url> <connections> <seconds> [method] [body] [authorization]
// Prints one JSON line: { requests, errors, seconds, perSecond, p50, p99 }.
import { Agent, request } from 'node:http';

const [url, connectionsText, secondsText, method = 'GET', body = '', authorization = ''] = process.argv.slice(2);
const connections = Number(connectionsText);
const seconds = Number(secondsText);
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + seconds * 1000;

function once(): Promise<void> {
  return new Promise((resolve) => {
    const started = performance.now();
    const headers: Record<string, string> = {};
    if (body) headers['Content-Type'] = 'application/json';
    if (authorization) headers.Authorization = authorization;
    const outgoing = request(url!, { method, agent, headers }, (response) => {
      response.resume();
      response.on('end', () => {
        if ((response.statusCode ?? 0) >= 300) errors++;
        latencies.push(performance.now() - started);
        resolve();
      });
    });
    outgoing.on('error', () => {
      errors++;
      resolve();
    });
    outgoing.end(body || undefined);
  });
}

async function worker(): Promise<void> {
  while (performance.now() < deadline) await once();
}

const started = performance.now();
await Promise.all(Array.from({ length: connections }, worker));
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
console.log(JSON.stringify({ requests: latencies.length, errors, seconds: elapsed, perSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) }));
agent.destroy();
