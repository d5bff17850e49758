/**
 * Who hears whom: routingPlan for every pair of directions (the spec's "Direction convention",
 * peer's point of view), three-party mixing, codec mismatch, tone sources, endpoints that cannot
 * be sent to yet, and the 4×4 table of intersectDirections. The expected tables are written out
 * by hand from the spec, not computed with the module's own predicates.
 */
import test, { type ExecutionContext } from 'ava';
import { intersectDirections, isDestination, isSource, routingPlan, type Route, type RouteNode } from '../../protocols/media/routing.js';
import { DIRECTIONS, type Direction } from '../../protocols/media/types.js';

type Expect = Record<string, { sources: string[]; mode: Route['mode'] }>;

/** The plan as a plain object, each route checked to name its own destination. */
function plan(t: ExecutionContext, nodes: RouteNode[]): Expect {
  const out: Expect = {};
  for (const [id, route] of routingPlan(nodes)) {
    t.is(route.destination, id);
    out[id] = { sources: [...route.sources].sort(), mode: route.mode };
  }
  return out;
}

const ep = (id: string, direction: Direction, extra: Partial<RouteNode> = {}): RouteNode => ({ id, direction, codec: 'pcmu', ...extra });

test('sources and destinations follow the spec’s table', (t) => {
  t.deepEqual(
    DIRECTIONS.map((d) => [d, isSource(d), isDestination(d)]),
    [
      ['sendrecv', true, true],
      ['sendonly', true, false],
      ['recvonly', false, true],
      ['inactive', false, false],
    ],
  );
});

/**
 * Two endpoints a and b, every combination: what a's and b's routes are ('-' = not a
 * destination, so no route). A peer that sends (sendonly/sendrecv) is heard by a peer that
 * receives (recvonly/sendrecv).
 */
const PAIRS: Array<[Direction, Direction, string, string]> = [
  ['sendrecv', 'sendrecv', 'hears b', 'hears a'],
  ['sendrecv', 'sendonly', 'hears b', '-'],
  ['sendrecv', 'recvonly', 'silent', 'hears a'],
  ['sendrecv', 'inactive', 'silent', '-'],
  ['sendonly', 'sendrecv', '-', 'hears a'],
  ['sendonly', 'sendonly', '-', '-'],
  ['sendonly', 'recvonly', '-', 'hears a'],
  ['sendonly', 'inactive', '-', '-'],
  ['recvonly', 'sendrecv', 'hears b', 'silent'],
  ['recvonly', 'sendonly', 'hears b', '-'],
  ['recvonly', 'recvonly', 'silent', 'silent'],
  ['recvonly', 'inactive', 'silent', '-'],
  ['inactive', 'sendrecv', '-', 'silent'],
  ['inactive', 'sendonly', '-', '-'],
  ['inactive', 'recvonly', '-', 'silent'],
  ['inactive', 'inactive', '-', '-'],
];

test('the pair table has all 16 combinations', (t) => {
  t.is(new Set(PAIRS.map(([a, b]) => `${a}/${b}`)).size, 16);
});

for (const [a, b, aRoute, bRoute] of PAIRS) {
  test(`two endpoints, a ${a} and b ${b}: a ${aRoute === '-' ? 'gets nothing' : aRoute}, b ${bRoute === '-' ? 'gets nothing' : bRoute}`, (t) => {
    const expected: Expect = {};
    const route = (r: string, other: string) => (r === 'silent' ? { sources: [], mode: 'silent' as const } : { sources: [other], mode: 'forward' as const });
    if (aRoute !== '-') expected.a = route(aRoute, 'b');
    if (bRoute !== '-') expected.b = route(bRoute, 'a');
    t.deepEqual(plan(t, [ep('a', a), ep('b', b)]), expected);
    // node order does not matter
    t.deepEqual(plan(t, [ep('b', b), ep('a', a)]), expected);
  });
}

test('a lone endpoint never hears itself', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv')]), { a: { sources: [], mode: 'silent' } });
  t.deepEqual(plan(t, [ep('a', 'sendonly')]), {});
  t.is(routingPlan([]).size, 0);
});

test('three talking endpoints: everyone hears the two others, mixed', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'sendrecv'), ep('c', 'sendrecv')]), {
    a: { sources: ['b', 'c'], mode: 'mix' },
    b: { sources: ['a', 'c'], mode: 'mix' },
    c: { sources: ['a', 'b'], mode: 'mix' },
  });
});

test('three endpoints with a listener and a speaker: only the listener mixes', (t) => {
  // a talks and listens, b only talks (sendonly), c only listens (recvonly)
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'sendonly'), ep('c', 'recvonly')]), {
    a: { sources: ['b'], mode: 'forward' },
    c: { sources: ['a', 'b'], mode: 'mix' },
  });
});

test('three endpoints, one inactive: the other two forward to each other, the inactive one is isolated', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'inactive'), ep('c', 'sendrecv')]), {
    a: { sources: ['c'], mode: 'forward' },
    c: { sources: ['a'], mode: 'forward' },
  });
});

test('one speaker, two listeners: both listeners get the speaker forwarded', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'recvonly'), ep('c', 'recvonly')]), {
    a: { sources: [], mode: 'silent' },
    b: { sources: ['a'], mode: 'forward' },
    c: { sources: ['a'], mode: 'forward' },
  });
});

test('a single source in another codec is mixed (transcoded), in both directions', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv', { codec: 'pcmu' }), ep('b', 'sendrecv', { codec: 'opus' })]), {
    a: { sources: ['b'], mode: 'mix' },
    b: { sources: ['a'], mode: 'mix' },
  });
  t.deepEqual(plan(t, [ep('a', 'sendrecv', { codec: 'pcma' }), ep('b', 'sendrecv', { codec: 'pcmu' })]), {
    a: { sources: ['b'], mode: 'mix' },
    b: { sources: ['a'], mode: 'mix' },
  });
  t.deepEqual(plan(t, [ep('a', 'sendrecv', { codec: 'g722' }), ep('b', 'sendrecv', { codec: 'g722' })]), {
    a: { sources: ['b'], mode: 'forward' },
    b: { sources: ['a'], mode: 'forward' },
  });
});

test('codecs decide per destination: one source can be forwarded to one listener and mixed for another', (t) => {
  t.deepEqual(plan(t, [ep('s', 'sendonly', { codec: 'opus' }), ep('l1', 'recvonly', { codec: 'opus' }), ep('l2', 'recvonly', { codec: 'pcma' })]), {
    l1: { sources: ['s'], mode: 'forward' },
    l2: { sources: ['s'], mode: 'mix' },
  });
});

test('a tone (generator) is always mixed, even alone and in the destination’s codec', (t) => {
  const tone = (direction: Direction, codec: RouteNode['codec'] = null): RouteNode => ({ id: 'tone', direction, codec, generator: true });
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), tone('sendonly')]), { a: { sources: ['tone'], mode: 'mix' } });
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), tone('sendonly', 'pcmu')]), { a: { sources: ['tone'], mode: 'mix' } });
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'sendrecv'), tone('sendonly')]), {
    a: { sources: ['b', 'tone'], mode: 'mix' },
    b: { sources: ['a', 'tone'], mode: 'mix' },
  });
});

test('a generator is never a destination, whatever its direction; an inactive tone is not heard', (t) => {
  for (const d of DIRECTIONS) {
    const routes = plan(t, [{ id: 'tone', direction: d, codec: 'pcmu', generator: true }, ep('a', 'recvonly')]);
    t.false('tone' in routes, d);
    t.deepEqual(routes.a, isSource(d) ? { sources: ['tone'], mode: 'mix' } : { sources: [], mode: 'silent' }, d);
  }
});

test('an endpoint with no codec yet is not a destination (it is still heard by others, mixed)', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'sendrecv', { codec: null })]), { a: { sources: ['b'], mode: 'mix' } });
  t.deepEqual(plan(t, [ep('a', 'sendonly'), ep('b', 'recvonly', { codec: null })]), {});
});

test('an endpoint that cannot send yet is not a destination; canSend true or absent is', (t) => {
  t.deepEqual(plan(t, [ep('a', 'sendrecv'), ep('b', 'sendrecv', { canSend: false })]), { a: { sources: ['b'], mode: 'forward' } });
  t.deepEqual(plan(t, [ep('a', 'sendrecv', { canSend: true }), ep('b', 'sendrecv')]), {
    a: { sources: ['b'], mode: 'forward' },
    b: { sources: ['a'], mode: 'forward' },
  });
  t.deepEqual(plan(t, [ep('a', 'sendonly'), ep('b', 'recvonly', { canSend: false, codec: null })]), {});
});

test('a larger session: every destination hears exactly the sending others', (t) => {
  const nodes: RouteNode[] = [];
  const dirs: Direction[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];
  for (let i = 0; i < 12; i++) nodes.push(ep(`e${i}`, dirs[i % 4]!, { codec: i % 3 === 0 ? 'opus' : 'pcmu' }));
  const routes = plan(t, nodes);
  // destinations: i % 4 in {0 (sendrecv), 2 (recvonly)}; senders: i % 4 in {0, 1}
  t.deepEqual(Object.keys(routes).sort(), ['e0', 'e10', 'e2', 'e4', 'e6', 'e8']);
  const senders = ['e0', 'e1', 'e4', 'e5', 'e8', 'e9'];
  for (const [id, r] of Object.entries(routes)) {
    t.deepEqual(r.sources, senders.filter((s) => s !== id).sort(), id);
    t.is(r.mode, 'mix');
  }
});

/** intersectDirections, all 16 cases (both in the peer's point of view). */
const INTERSECT: Array<[Direction, Direction, Direction]> = [
  ['sendrecv', 'sendrecv', 'sendrecv'],
  ['sendrecv', 'sendonly', 'sendonly'],
  ['sendrecv', 'recvonly', 'recvonly'],
  ['sendrecv', 'inactive', 'inactive'],
  ['sendonly', 'sendrecv', 'sendonly'],
  ['sendonly', 'sendonly', 'sendonly'],
  ['sendonly', 'recvonly', 'inactive'],
  ['sendonly', 'inactive', 'inactive'],
  ['recvonly', 'sendrecv', 'recvonly'],
  ['recvonly', 'sendonly', 'inactive'],
  ['recvonly', 'recvonly', 'recvonly'],
  ['recvonly', 'inactive', 'inactive'],
  ['inactive', 'sendrecv', 'inactive'],
  ['inactive', 'sendonly', 'inactive'],
  ['inactive', 'recvonly', 'inactive'],
  ['inactive', 'inactive', 'inactive'],
];

test('intersectDirections: the 4×4 table', (t) => {
  t.is(new Set(INTERSECT.map(([a, b]) => `${a}/${b}`)).size, 16);
  for (const [a, b, want] of INTERSECT) t.is(intersectDirections(a, b), want, `${a} ∩ ${b}`);
});

test('intersectDirections is commutative, idempotent, has sendrecv as identity and inactive as zero', (t) => {
  for (const a of DIRECTIONS) {
    t.is(intersectDirections(a, a), a);
    t.is(intersectDirections(a, 'sendrecv'), a);
    t.is(intersectDirections('inactive', a), 'inactive');
    for (const b of DIRECTIONS) t.is(intersectDirections(a, b), intersectDirections(b, a));
  }
});
