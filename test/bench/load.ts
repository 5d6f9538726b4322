// Runs the load generator (load.child.ts) in its own process and reads its figures.
import { execFile } from 'node:child_process';

export interface Load { requests: number; errors: number; perSecond: number; p50: number; p99: number }

const loadPath = new URL('./load.child.mjs', import.meta.url).pathname;

/** 50 connections for 5 s against `url`. */
export function load(url: string, method = 'GET', body = '', authorization = ''): Promise<Load> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [loadPath, url, '50', '5', method, body, authorization], (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}
