import test from 'ava';
import { createHash } from 'node:crypto';
import { adminToken, adminTokenHash, adminTokenMatches, environmentNeed, permits, scopeList, type Scope } from '../../protocols/deploy/admin-scopes.js';
import { attempt } from '../../protocols/deploy/errors.js';
import { refused } from './results.js';

test('an admin token is hdt_ and 32 random bytes; only its SHA-256 is stored, compared in constant time', (t) => {
  const token = adminToken(Buffer.alloc(32, 5));
  t.is(token, `hdt_${Buffer.alloc(32, 5).toString('base64url')}`);
  t.is(adminTokenHash(token), createHash('sha256').update(token).digest('hex'));
  t.true(adminTokenMatches(token, adminTokenHash(token)));
  t.false(adminTokenMatches(adminToken(Buffer.alloc(32, 6)), adminTokenHash(token)));
  t.false(adminTokenMatches(token.slice(4), adminTokenHash(token.slice(4))), 'the prefix is required');
  t.false(adminTokenMatches(token, 'not-a-hash'));
  t.throws(() => adminToken(Buffer.alloc(16)), { instanceOf: TypeError });
});

test('scopes: admin, read, iac:<id>; anything else refused naming the item', (t) => {
  t.deepEqual(scopeList(['read', 'iac:3', 'iac:2147483647']), ['read', 'iac:3', 'iac:2147483647']);
  const cases: [unknown, string][] = [
    [[], 'scopes must be a non-empty array of scopes (admin, read, iac:<iacRepoId>); got an array'],
    ['admin', 'scopes must be a non-empty array of scopes (admin, read, iac:<iacRepoId>); got "admin"'],
    [['root'], 'scopes[0] must be admin, read or iac:<iacRepoId>; got "root"'],
    [['read', 'iac:0'], 'scopes[1] must be admin, read or iac:<iacRepoId>; got "iac:0"'],
    [['iac:2147483648'], 'scopes[0] must be admin, read or iac:<iacRepoId>; got "iac:2147483648"'],
    [['iac:01'], 'scopes[0] must be admin, read or iac:<iacRepoId>; got "iac:01"'],
    [['read', 'read'], 'scopes[1] repeats "read"'],
  ];
  for (const [v, message] of cases) t.is(refused(attempt(() => scopeList(v))).message, message);
});

test('managing an environment needs the scope of its IaC repository: old and new on update', (t) => {
  const s: Scope[] = ['iac:1'];
  t.true(permits(s, environmentNeed(null, 1)), 'create in repository 1');
  t.false(permits(s, environmentNeed(null, 2)), 'create in repository 2');
  t.false(permits(s, environmentNeed(1, 2)), 'move from 1 to 2 needs both');
  t.true(permits(['iac:1', 'iac:2'], environmentNeed(1, 2)));
  t.true(permits(s, environmentNeed(1, 1)));
  t.deepEqual(environmentNeed(1, 1), { kind: 'iac', iacRepoIds: [1] });
  t.true(permits(s, environmentNeed(1, null)), 'delete from 1');
});

test('admin does everything; read only reads; an iac scope also reads but is not admin', (t) => {
  for (const need of [{ kind: 'admin' } as const, { kind: 'read' } as const, environmentNeed(null, 9)]) t.true(permits(['admin'], need));
  t.true(permits(['read'], { kind: 'read' }));
  t.false(permits(['read'], { kind: 'admin' }));
  t.false(permits(['read'], environmentNeed(null, 1)));
  t.true(permits(['iac:1'], { kind: 'read' }));
  t.false(permits(['iac:1'], { kind: 'admin' }));
});
