// What the event stream costs: 100 stream clients on real connections each receive 1,000 events,
// published at a steady rate (one every 2 ms) and then in bursts (50 per turn of the event loop).
// Each event carries its publish time; prints delivery latency p50/p99 over all deliveries, the
// total time and RSS. Server and clients share one process, so latency includes client parsing.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamHub } from '../../src/http/sse';
import { connectEventStream, type EventStream } from '../helpers/sse-client';

const clientCount = 100;
const eventCount = 1000;
const padding = 'x'.repeat(200); // about the size of a small log batch

function percentile(sorted: Float64Array, fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

const hub = new EventStreamHub();
const server = createServer((request, response) => hub.attach(request, response));
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/events`;

const rows: string[][] = [['publishing', 'clients', 'events', 'deliveries', 'p50 ms', 'p99 ms', 'max ms', 'total ms', 'RSS MB before', 'RSS MB after']];
try {
  for (const [label, publish] of [
    ['steady, 1 per 2 ms', steady],
    ['bursts of 50', bursts],
  ] as const) {
    const latencies = new Float64Array(clientCount * eventCount);
    let delivered = 0;
    const streams: EventStream[] = [];
    for (let index = 0; index < clientCount; index += 1) {
      streams.push(await connectEventStream(url, {
        record: false,
        onEvent: (event) => {
          const { sentAt } = JSON.parse(event.data) as { sentAt: number };
          latencies[delivered++] = performance.now() - sentAt;
        },
      }));
    }
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    await publish();
    await streams[0]!.waitFor(() => delivered === latencies.length, 60_000);
    const totalMs = performance.now() - started;
    const rssAfter = process.memoryUsage().rss;
    for (const stream of streams) stream.close();
    latencies.sort();
    rows.push([
      label, String(clientCount), String(eventCount), String(delivered),
      percentile(latencies, 0.5).toFixed(2), percentile(latencies, 0.99).toFixed(2), latencies[latencies.length - 1]!.toFixed(2),
      totalMs.toFixed(0), megabytes(rssBefore), megabytes(rssAfter),
    ]);
    while (hub.clientCount > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
} finally {
  hub.closeAll();
  server.closeAllConnections();
  server.close();
}
printTable(rows);

async function steady(): Promise<void> {
  for (let index = 0; index < eventCount; index += 1) {
    hub.publish('logs', { index, sentAt: performance.now(), padding });
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function bursts(): Promise<void> {
  for (let index = 0; index < eventCount; index += 1) {
    hub.publish('logs', { index, sentAt: performance.now(), padding });
    if (index % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
}

function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  for (const row of table) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}
