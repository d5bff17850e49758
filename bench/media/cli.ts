/** The benches' command-line start: options parsed, or --help printed, or the error and the help. */
export function optionsOrExit<T>(parse: () => T | null, help: string): { options: T } | { exit: number } {
  let parsed: T | null;
  try {
    parsed = parse();
  } catch (e) {
    console.error((e as Error).message + '\n\n' + help);
    return { exit: 2 };
  }
  if (!parsed) {
    console.log(help);
    return { exit: 0 };
  }
  return { options: parsed };
}
