// A real Factory on a temporary data folder, and small helpers to drive it in tests.
import { startFactory, type Factory, type StartOptions } from '../../src/app';
import type { FactoryEventName, FactoryEvents, Pipeline, Run, Step } from '../../src/core/api';
import { makeTempDir, removeTempDir, waitFor } from './temp';

export interface TestFactory extends Factory {
  dir: string;
  projectId: string;
  /** Saves a pipeline with these steps in the Demo project. */
  pipeline(steps: Step[], extra?: Partial<Pipeline>): Promise<Pipeline>;
  /** Waits until the run's status is one of `statuses`; returns the full run. */
  waitForRun(runId: string, statuses: Run['status'][], timeoutMs?: number): Promise<Run>;
  /** Records every event of these names until `close`. */
  record<E extends FactoryEventName>(event: E): FactoryEvents[E][];
  close(): Promise<void>;
}

export async function startTestFactory(options: { overrides?: unknown; dir?: string; triggerTuning?: StartOptions['triggerTuning']; now?: () => number; linearOAuth?: StartOptions['linearOAuth']; ssh?: StartOptions['ssh'] } = {}): Promise<TestFactory> {
  const dir = options.dir ?? makeTempDir('factory-engine');
  const factory = await startFactory({ dataDir: dir, platform: 'web', uiRoot: 'dist/ui', overrides: options.overrides, ...(options.triggerTuning ? { triggerTuning: options.triggerTuning } : {}), ...(options.now ? { now: options.now } : {}), ...(options.linearOAuth ? { linearOAuth: options.linearOAuth } : {}), ...(options.ssh ? { ssh: options.ssh } : {}) });
  const { projects } = await factory.api.snapshot();
  const unsubscribers: (() => void)[] = [];
  return {
    ...factory,
    dir,
    projectId: projects[0]!.id,
    async pipeline(steps, extra = {}) {
      return factory.api.savePipeline({ projectId: projects[0]!.id, name: 'Test pipeline', variables: {}, steps, ...extra });
    },
    async waitForRun(runId, statuses, timeoutMs = 10_000) {
      // Run events say when the status changed; the full run is read only then.
      let status = (await factory.api.getRun(runId))?.status;
      const stop = factory.api.on('run', (run) => {
        if (run.id === runId) status = run.status;
      });
      let run: Run | undefined;
      try {
        await waitFor(async () => {
          if (!status || !statuses.includes(status)) return false;
          run = await factory.api.getRun(runId);
          return Boolean(run && statuses.includes(run.status));
        }, timeoutMs, `run ${runId} to be ${statuses.join(' or ')} (it is ${status})`);
      } finally {
        stop();
      }
      return run!;
    },
    record(event) {
      const seen: never[] = [];
      unsubscribers.push(factory.api.on(event, (payload) => seen.push(payload as never)));
      return seen;
    },
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await factory.stop();
      if (!options.dir) removeTempDir(dir);
    },
  };
}

/** A shell step. */
export function shell(id: string, command: string, extra: Partial<Step> = {}): Step {
  return { id, name: id, kind: 'shell', command, ...extra } as Step;
}

/** An approval step. */
export function approval(id: string, message: string, choices?: { mode: 'single' | 'multiple'; options: string[] }): Step {
  return { id, name: id, kind: 'approval', message, ...(choices ? { choices } : {}) };
}
