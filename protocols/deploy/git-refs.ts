/**
 * Git branch names and refs, as far as the deployment service reads them: the branch an
 * environment follows (and an IaC repository's branch), checked with the rules of
 * `git check-ref-format --branch`, and the branch a CI job ran on, taken from the job's ref.
 * GitLab reports a branch pipeline's ref as the bare branch name (`main`); other CI systems send
 * `refs/heads/main`. Both give `main`. A tag or merge-request ref (`refs/tags/v1`,
 * `refs/merge-requests/7/head`) is not a branch and so matches no environment. Pure.
 */
import { invalid } from './errors.js';
import { describe } from './fields.js';

/** Longest branch name accepted. */
export const MAX_BRANCH_LENGTH = 255;

/** Why `name` is not a valid branch name, or null. The rules of git-check-ref-format(1). */
export function branchProblem(name: string): string | null {
  if (name === '') return 'must not be empty';
  if (name.length > MAX_BRANCH_LENGTH) return `is longer than ${MAX_BRANCH_LENGTH} characters`;
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(name)) return 'must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  if (name.includes('..')) return "must not contain '..'";
  if (name.includes('@{') || name === '@') return "must not contain '@{' or be '@'";
  if (name.startsWith('-')) return "must not begin with '-'";
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return "must not begin or end with '/' or contain '//'";
  if (name.endsWith('.')) return "must not end with '.'";
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return "must not have a component beginning with '.'";
    if (part.endsWith('.lock')) return "must not have a component ending with '.lock'";
  }
  if (name.startsWith('refs/')) return "is a ref, not a branch name (leave out 'refs/heads/')";
  return null;
}

/** A valid branch name, or a 400 refusal naming `name`. */
export function branchName(value: unknown, field: string): string {
  if (typeof value !== 'string') return invalid(`${field} must be a string; got ${describe(value)}`);
  const problem = branchProblem(value);
  if (problem !== null) invalid(`${field} ${problem}; got ${describe(value)}`);
  return value;
}

/** The branch a job's ref names: `refs/heads/x` and a bare valid name give `x`; anything else null. */
export function branchOfRef(ref: string): string | null {
  const name = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  return branchProblem(name) === null ? name : null;
}
