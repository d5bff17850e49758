import test from 'ava';
import { attempt } from '../../protocols/deploy/errors.js';
import { parseRepoUrl, repoKey } from '../../protocols/deploy/repo-url.js';

const refusedWith = (v: unknown, name = 'repoUrl') => {
  const r = attempt(() => parseRepoUrl(v, name));
  if (r.ok) throw new Error(`expected a refusal for ${JSON.stringify(v)}, got ${r.value.key}`);
  return r.error;
};

test('one GitLab project spelt every usual way has one key', (t) => {
  const forms = [
    'https://gitlab.example.com/group/app',
    'https://gitlab.example.com/group/app.git',
    'https://gitlab.example.com/group/app/',
    'https://gitlab.example.com/group/app.git/',
    'https://GitLab.Example.COM/group/app',
    'https://gitlab.example.com:443/group/app',
    'http://gitlab.example.com/group/app',
    'https://ci-user@gitlab.example.com/group/app.git',
    'https://gitlab.example.com//group//app',
    'ssh://git@gitlab.example.com/group/app.git',
    'ssh://git@gitlab.example.com:22/group/app.git',
    'git+ssh://git@gitlab.example.com/group/app',
    'git@gitlab.example.com:group/app.git',
    'gitlab.example.com:group/app',
    'git://gitlab.example.com/group/app.git',
    'git://gitlab.example.com:9418/group/app',
  ];
  for (const f of forms) t.is(repoKey(f), 'gitlab.example.com/group/app', f);
});

test('the path keeps its case, a non-default port is kept, file URLs key as their path', (t) => {
  t.not(repoKey('https://h.example/Group/App'), repoKey('https://h.example/group/app'));
  t.is(repoKey('https://h.example/Group/App.git'), 'h.example/Group/App');
  t.is(repoKey('https://h.example:8443/g/app'), 'h.example:8443/g/app');
  t.is(repoKey('ssh://git@h.example:2222/g/app'), 'h.example:2222/g/app');
  t.is(repoKey('http://h.example:443/g/app'), 'h.example:443/g/app', 'the default port is per scheme');
  t.is(repoKey('file:///srv/git/app.git'), '/srv/git/app');
  t.is(repoKey('file:///srv/git/app/'), '/srv/git/app');
  t.is(repoKey('https://[::1]:3000/g/app'), '[::1]:3000/g/app');
  t.deepEqual(parseRepoUrl('git@h.example:g/app.git'), { scheme: 'ssh', host: 'h.example', port: null, path: 'g/app', key: 'h.example/g/app' });
  t.is(repoKey('https://h.example/g/app.github'), 'h.example/g/app.github', 'only a whole .git suffix goes');
});

test('refused: not a string, empty, spaces, unknown schemes, credentials, query, fragment, dot segments, no path, file with a host', (t) => {
  const cases: [unknown, RegExp][] = [
    [undefined, /^repoUrl is required$/],
    [42, /^repoUrl must be a string; got number 42$/],
    ['', /^repoUrl must not be empty$/],
    [' https://h/g/app', /^repoUrl must not contain spaces$/],
    ['https://h/g/ap p', /^repoUrl must not contain spaces$/],
    ['https://h/g/app\n', /^repoUrl must not contain control characters$/],
    ['ftp://h/g/app', /unsupported scheme "ftp"/],
    ['/srv/git/app', /must be a git URL/],
    ['app', /must be a git URL/],
    ['https://user:token@h.example/g/app', /must not carry a password or token/],
    ['https://h.example/g/app?x=1', /query or fragment/],
    ['https://h.example/g/app#main', /query or fragment/],
    ['https://h.example/g/../app', /'\.' or '\.\.' path segments/],
    ['https://h.example/g/%2e%2e/app', /'\.' or '\.\.' path segments/],
    ['ssh://git@h.example/./app', /'\.' or '\.\.' path segments/],
    ['git@h.example:../app', /'\.' or '\.\.' path segments/],
    ['https://h.example/', /has no repository path/],
    ['https://h.example/.git', /has no repository path/],
    ['file://server/srv/app', /must not name a host/],
    ['https://h_x.example/g/app', /invalid host/],
    ['x'.repeat(2049), /longer than 2048/],
  ];
  for (const [v, re] of cases) {
    const e = refusedWith(v);
    t.is(e.status, 400);
    t.is(e.code, v === undefined ? 'MISSING_FIELD' : 'INVALID_FIELD');
    t.regex(e.message, re, String(v));
  }
  t.regex(refusedWith('nope', 'url').message, /^url /, 'the message names the field given');
});
