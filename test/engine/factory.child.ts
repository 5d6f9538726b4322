// A Factory in a child process, driven over Node's IPC channel: the parent sends
// { id, method, args } and gets { id, result } or { id, error }. Used to kill a real engine with
// SIGKILL and start it again on the same data folder.
import { startFactory } from '../../src/app';
import type { FactoryMethods } from '../../src/core/api';

const dataDir = process.argv[2]!;
const factory = await startFactory({ dataDir, platform: 'web', uiRoot: 'dist/ui' });
process.on('message', async (message: { id: number; method: keyof FactoryMethods; args: unknown[] }) => {
  try {
    const method = factory.api[message.method] as (...args: unknown[]) => Promise<unknown>;
    const result = await method(...message.args);
    process.send!({ id: message.id, result: result ?? null });
  } catch (error) {
    process.send!({ id: message.id, error: (error as Error).message });
  }
});
process.on('SIGTERM', async () => {
  await factory.stop();
  process.exit(0);
});
process.send!({ ready: true });
