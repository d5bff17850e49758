/**
 * The names and shapes of the CPU tasks any actor can run in the shared piscina pool
 * (ctx.runTask). runtime/ names none of them: the task module (workers/tasks/index.ts) adds each
 * task to this map by declaration merging, so a call with a wrong name, argument or result type
 * is a compile error wherever the task module is part of the program.
 *
 *   declare module '../../runtime/actor/tasks.js' {
 *     interface TaskMap { hash: { arg: HashTask; result: string } }
 *   }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface TaskMap {}

export type TaskName = keyof TaskMap & string;
export type TaskArg<N extends TaskName> = TaskMap[N] extends { arg: infer A } ? A : never;
export type TaskResult<N extends TaskName> = TaskMap[N] extends { result: infer R } ? R : never;
