/**
 * Clean-up that runs whatever happens: steps are added as resources are made and run in reverse
 * order when a section ends (run()), on an error, and on SIGINT/SIGTERM/SIGHUP, where the
 * running child processes are stopped first and the process then exits 130/143/129.
 */
import { killChildren } from './proc.js';

export type Step = { what: string; run: () => Promise<void> | void };

const log = (s: string) => process.stderr.write(`${s}\n`);

export class Cleanup {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;
  private readonly onSignal = (sig: NodeJS.Signals) => {
    log(`\n${sig}: cleaning up before exit`);
    killChildren();
    void this.run().finally(() => process.exit(sig === 'SIGINT' ? 130 : sig === 'SIGTERM' ? 143 : 129));
  };

  constructor() {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, this.onSignal);
  }

  /** Registers a step; returns a function that runs it now (once) and drops it from the list. */
  add(what: string, run: () => Promise<void> | void): () => Promise<void> {
    const step: Step = { what, run };
    this.steps.push(step);
    return async () => {
      const i = this.steps.indexOf(step);
      if (i < 0) return;
      this.steps.splice(i, 1);
      await step.run();
    };
  }

  /** Runs every step registered so far, last first; a failing step is logged and the rest still run. */
  run(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length) {
        const step = this.steps.pop()!;
        try {
          await step.run();
        } catch (err) {
          log(`clean-up: ${step.what} failed: ${(err as Error).message}`);
        }
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Stops listening for signals (after the last run()). */
  close(): void {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, this.onSignal);
  }
}
