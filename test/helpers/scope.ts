/**
 * What a helper needs of its caller to clean up after itself: somewhere to register teardowns, and
 * a log. An ava test's `t` is one; a FileScope is one for a whole test file.
 */
export interface Scope {
  /** Run `fn` when the scope ends (teardowns run in reverse order of registration). */
  teardown(fn: () => void | Promise<void>): void;
  log(...values: unknown[]): void;
}

/**
 * Teardowns for a whole test file: ava runs a hook's own t.teardown right after the hook, so a
 * store made in test.before registers its clean-up here and test.after.always runs it
 * (`test.after.always(() => scope.run())`), in reverse order of registration, like t.teardown.
 */
export class FileScope implements Scope {
  private readonly fns: Array<() => void | Promise<void>> = [];

  teardown(fn: () => void | Promise<void>): void {
    this.fns.push(fn);
  }

  log(...values: unknown[]): void {
    console.error(...values);
  }

  /**
   * The scope itself, for callers written when FileScope held a faked ava context here
   * (bench/maintenance/store.ts passes `scope.t` to the loop helpers). New code passes the scope.
   */
  get t(): Scope {
    return this;
  }

  async run(): Promise<void> {
    for (const fn of this.fns.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error('clean-up failed:', err);
      }
    }
  }
}
