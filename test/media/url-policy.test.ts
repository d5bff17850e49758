/** protocols/media/url-policy.ts: the SSRF rules of URL file sources, case by case. */
import test from 'ava';
import { inCidr, parseCidr, parseIp, parseCidrList } from '../../protocols/media/ip.js';
import { checkRedirect, checkUrl, hostOf, parseOrigins, refuseAddress, specialRange, MAX_REDIRECTS, type UrlPolicy } from '../../protocols/media/url-policy.js';

const hex = (b: Uint8Array | null) => (b ? Buffer.from(b).toString('hex') : null);

test('parseIp: IPv4 as mapped IPv6, IPv6 forms, and what is not an address', (t) => {
  t.is(hex(parseIp('127.0.0.1')), '00000000000000000000ffff7f000001');
  t.is(hex(parseIp('::1')), '00000000000000000000000000000001');
  t.is(hex(parseIp('[fe80::1]')), 'fe800000000000000000000000000001');
  t.is(hex(parseIp('::ffff:10.0.0.1')), '00000000000000000000ffff0a000001');
  t.is(hex(parseIp('2001:db8:0:0:0:0:0:1')), '20010db8000000000000000000000001');
  for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '01.2.3.4', '0x7f000001', '2130706433', '1::2::3', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', 'example.com', '::g']) {
    t.is(parseIp(bad), null, bad);
  }
});

test('specialRange names every class the rules refuse; public addresses are null', (t) => {
  const cases: Array<[string, RegExp | null]> = [
    ['127.0.0.1', /loopback/],
    ['127.255.1.2', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['172.32.0.1', null],
    ['192.168.1.1', /private/],
    ['100.64.0.1', /shared/],
    ['169.254.169.254', /link-local/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.2.10', /documentation/],
    ['198.18.5.5', /benchmarking/],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:169.254.169.254', /link-local/],
    ['fd00::1', /unique local/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['64:ff9b::7f00:1', /NAT64/],
    ['2002:7f00:1::1', /6to4/],
    ['2001:db8::1', /documentation/],
    ['2606:4700::1111', null],
  ];
  for (const [ip, want] of cases) {
    const why = specialRange(parseIp(ip)!);
    if (want === null) t.is(why, null, ip);
    else t.regex(why ?? '(public)', want, ip);
  }
});

test('networks: CIDR parsing, matching, and their refusals', (t) => {
  const n = parseCidrList('10.20.0.0/16, fd00:1::/64,192.168.5.7');
  t.deepEqual(n.map((c) => c.prefix), [112, 64, 128]);
  t.true(inCidr(parseIp('10.20.3.4')!, n[0]!));
  t.false(inCidr(parseIp('10.21.0.1')!, n[0]!));
  t.true(inCidr(parseIp('fd00:1::abcd')!, n[1]!));
  t.false(inCidr(parseIp('fd00:2::1')!, n[1]!));
  t.true(inCidr(parseIp('192.168.5.7')!, n[2]!));
  t.true(inCidr(parseIp('1.2.3.4')!, parseCidr('0.0.0.0/0')));
  t.false(inCidr(parseIp('::1')!, parseCidr('0.0.0.0/0')), 'an IPv4 /0 holds IPv4 addresses only');
  t.throws(() => parseCidr('10.0.0.0/33'), { message: /prefix length must be 0–32/ });
  t.throws(() => parseCidr('fd00::/129'), { message: /0–128/ });
  t.throws(() => parseCidr('example.com/8'), { message: /is not a network/ });
  t.throws(() => parseCidr('10.0.0.0/8/9'), { message: /is not a network/ });
  t.throws(() => parseCidrList('10.0.0.0/8,nope'), { message: /"nope" is not a network/ });
  const policy: UrlPolicy = { origins: [], networks: n };
  t.is(refuseAddress('10.20.9.9', policy), null, 'allowed by the network');
  t.regex(refuseAddress('10.30.9.9', policy) ?? '', /10\.30\.9\.9 is private \(RFC 1918\), and not in MEDIA_FILE_NETWORKS/);
  t.is(refuseAddress('8.8.4.4', policy), null);
  t.regex(refuseAddress('not-an-ip', policy) ?? '', /not an IP address/);
});

test('origins: parsed and normalised; checkUrl applies scheme, credentials and the list', (t) => {
  t.deepEqual(parseOrigins('https://Media.Example.com:443, http://127.0.0.1:8080'), ['https://media.example.com', 'http://127.0.0.1:8080']);
  for (const bad of ['ftp://x.example', 'https://x.example/path', 'https://u:p@x.example', 'https://x.example?q=1', 'x.example']) {
    t.throws(() => parseOrigins(bad), { message: /is not an origin/ }, bad);
  }
  const policy: UrlPolicy = { origins: parseOrigins('https://media.example.com,http://10.0.0.5:8080'), networks: [] };
  t.true(checkUrl('https://media.example.com/a/b.wav?t=1', policy).ok);
  t.true(checkUrl('https://MEDIA.example.com:443/b.wav', policy).ok, 'default port and case folded');
  t.true(checkUrl('http://10.0.0.5:8080/b.wav', policy).ok, 'listed (its address is judged after the lookup)');
  const why = (u: string, p = policy) => {
    const r = checkUrl(u, p);
    return r.ok ? 'ok' : r.message;
  };
  t.regex(why('https://media.example.com:8443/b.wav'), /origin https:\/\/media\.example\.com:8443 is not in MEDIA_FILE_ORIGINS/);
  t.regex(why('http://media.example.com/b.wav'), /origin http:\/\/media\.example\.com is not in/);
  t.regex(why('https://user:secret@media.example.com/b.wav'), /user name or password in the URL is refused/);
  t.notRegex(why('https://user:secret@media.example.com/b.wav'), /secret/);
  t.regex(why('file:///etc/passwd'), /scheme file: is not allowed/);
  t.regex(why('gopher://x/'), /scheme gopher: is not allowed/);
  t.regex(why('not a url'), /not a valid URL/);
  t.regex(why('https://media.example.com/x', { origins: [], networks: [] }), /URL playback is off/);
  t.is(hostOf(new URL('http://[::1]:80/')), '::1');
  t.is(hostOf(new URL('http://a.example/')), 'a.example');
});

test('redirects: each checked again, at most MAX_REDIRECTS, never https → http', (t) => {
  const policy: UrlPolicy = { origins: parseOrigins('https://a.example,https://b.example,http://c.example'), networks: [] };
  const from = new URL('https://a.example/x.wav');
  const r = checkRedirect(from, '/y.wav', 1, policy);
  t.true(r.ok && r.value.href === 'https://a.example/y.wav', 'relative Location resolved');
  t.true(checkRedirect(from, 'https://b.example/z.wav', MAX_REDIRECTS, policy).ok);
  const why = (loc: string | undefined, hop = 1, f = from) => {
    const c = checkRedirect(f, loc, hop, policy);
    return c.ok ? 'ok' : c.message;
  };
  t.regex(why('/y.wav', MAX_REDIRECTS + 1), /more than 5 redirects/);
  t.regex(why('http://c.example/z.wav'), /https → http is refused/);
  t.is(why('https://b.example/z.wav', 1, new URL('http://c.example/')), 'ok', 'http → https is fine');
  t.regex(why('https://evil.example/'), /a redirect from https:\/\/a\.example: origin https:\/\/evil\.example is not in MEDIA_FILE_ORIGINS/);
  t.regex(why(undefined), /without a Location/);
  t.regex(why('http://[bad'), /invalid URL/);
});
