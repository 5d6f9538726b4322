// Drives a Factory running in a child process (test/engine/factory.child.ts).
import { fork, type ChildProcess } from 'node:child_process';
import type { FactoryMethods } from '../../src/core/api';

export interface ChildFactory {
  child: ChildProcess;
  call<M extends keyof FactoryMethods>(method: M, ...args: Parameters<FactoryMethods[M]>): ReturnType<FactoryMethods[M]>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the child on `dataDir` and resolves once its engine is ready. `childPath` is the compiled .child.mjs. */
export function startChildFactory(childPath: string, dataDir: string): Promise<ChildFactory> {
  const child = fork(childPath, [dataDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`The child Factory exited with code ${code} before it was ready`)));
    child.on('message', (message: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
      if (message.ready) {
        resolve({
          child,
          call(method, ...args) {
            const id = nextId++;
            return new Promise((resolveCall, rejectCall) => {
              pending.set(id, { resolve: resolveCall, reject: rejectCall });
              child.send({ id, method, args: args.map((arg) => (arg === undefined ? null : arg)) });
            }) as never;
          },
          async kill(signal = 'SIGKILL') {
            child.kill(signal);
            await exited;
          },
        });
        return;
      }
      const waiter = pending.get(message.id!);
      pending.delete(message.id!);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.result);
    });
  });
}
