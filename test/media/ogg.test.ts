/**
 * The Ogg demuxer (protocols/media/codecs/ogg.ts) on pages built here byte by byte: packets
 * across pages, the 255-byte lacing edge, and every damaged, cut or unsupported layout refused
 * with its message.
 */
import test from 'ava';
import { demuxOgg, oggCrc, OGG_BOS, OGG_CONTINUED, OGG_EOS, stampOggCrc } from '../../protocols/media/codecs/ogg.js';
import { cat, page, type PageSpec } from '../helpers/ogg.js';

const message = (file: Uint8Array) => {
  const r = demuxOgg(file);
  return r.ok ? 'ok' : r.message;
};

test('the CRC is Ogg’s (MSB-first 0x04c11db7, init 0, no final xor): the catalogue check value', (t) => {
  t.is(oggCrc(new TextEncoder().encode('123456789')), 0x89a1897f);
  t.is(oggCrc(new Uint8Array(0)), 0);
});

test('packets: several on a page, one across three pages, the 255-byte edge, granules kept', (t) => {
  const big = 600; // 255 + 255 + 90, split over pages
  const file = cat(
    page({ lacing: [10, 20], flags: OGG_BOS, granule: 0, sequence: 0, fill: 1 }),
    page({ lacing: [255], sequence: 1, fill: 2 }),
    page({ lacing: [255], flags: OGG_CONTINUED, sequence: 2, fill: 2 }),
    page({ lacing: [90, 255, 0, 5], flags: OGG_CONTINUED, granule: 960, sequence: 3, fill: 2 }),
    page({ lacing: [], sequence: 4 }),
    page({ lacing: [7], flags: OGG_EOS, granule: 1920, sequence: 5, fill: 3 }),
  );
  const r = demuxOgg(file);
  if (!r.ok) return t.fail(r.message);
  t.is(r.stream.serial, 0x1234);
  t.deepEqual(r.stream.packets.map((p) => [p.data.length, p.page]), [[10, 0], [20, 0], [big, 3], [255, 3], [5, 3], [7, 5]]);
  t.deepEqual(r.stream.pages.map((p) => [p.granule, p.packetsEnding]), [[0, 2], [-1, 0], [-1, 0], [960, 3], [-1, 0], [1920, 1]]);
  t.true(r.stream.packets[2]!.data.every((b) => b === 2));
  t.is(r.stream.pages[3]!.offset, page({ lacing: [10, 20] }).length + 2 * page({ lacing: [255] }).length);
});

test('a granule position up to 2^53 is read whole; beyond is refused', (t) => {
  const ok = demuxOgg(cat(page({ lacing: [1], flags: OGG_BOS | OGG_EOS, granule: 2 ** 40 + 5 })));
  t.true(ok.ok && ok.stream.pages[0]!.granule === 2 ** 40 + 5);
  t.regex(message(page({ lacing: [1], flags: OGG_BOS | OGG_EOS, granule: 2n ** 60n })), /granule position 1152921504606846976, beyond any real length/);
});

const bos = page({ lacing: [3], flags: OGG_BOS, granule: 0, sequence: 0 });
const eos = (sequence = 1, more: Partial<PageSpec> = {}) => page({ lacing: [4], flags: OGG_EOS, granule: 100, sequence, ...more });
const good = cat(bos, eos());

test('the good two-page stream demuxes (the base of the refusals below)', (t) => {
  t.is(message(good), 'ok');
});

test('refused: not Ogg, empty, cut anywhere', (t) => {
  t.is(message(new Uint8Array(0)), 'not an Ogg file: it is empty');
  t.is(message(new TextEncoder().encode('RIFF....WAVE')), 'not an Ogg file: it does not start with OggS');
  t.regex(message(good.subarray(0, 20)), /^truncated Ogg file: the page at byte 0 has 20 bytes, shorter than a page header/);
  t.regex(message(good.subarray(0, 27)), /^truncated Ogg file: the segment table of the page at byte 0 runs past the end/);
  t.regex(message(good.subarray(0, 29)), /^truncated Ogg file: the page at byte 0 says 31 bytes, only 29 remain/);
  t.regex(message(good.subarray(0, bos.length + 30)), /^truncated Ogg file: the page at byte 31 says 32 bytes, only 30 remain/);
  t.regex(message(bos), /^truncated Ogg file: no end-of-stream page after 1 page/);
  t.regex(message(cat(bos, new Uint8Array([0x4f, 0x67]))), /no OggS capture pattern at byte 31/);
});

test('refused: every flipped byte of a page (the CRC, or the header checks before it)', (t) => {
  for (let i = 0; i < good.length; i++) {
    const bad = good.slice();
    bad[i] = bad[i]! ^ 0x10;
    t.not(message(bad), 'ok', `byte ${i}`);
  }
  const flipped = good.slice();
  flipped[bos.length + 30] = flipped[bos.length + 30]! ^ 1; // a body byte of the second page
  t.regex(message(flipped), /^corrupt Ogg file: the CRC of the page at byte 31 is 0x[0-9a-f]{8}, its bytes give 0x[0-9a-f]{8}$/);
  t.regex(message(cat(page({ lacing: [3], flags: OGG_BOS, granule: 0 }, 0xdeadbeef), eos())), /CRC of the page at byte 0 is 0xdeadbeef/);
});

test('refused: page headers that break the rules', (t) => {
  const v1 = bos.slice();
  v1[4] = 1;
  stampOggCrc(v1, 0, v1.length);
  t.regex(message(cat(v1, eos())), /^unsupported Ogg version 1 in the page at byte 0/);
  t.regex(message(cat(page({ lacing: [3], flags: OGG_BOS | 0x08, granule: 0 }), eos())), /unknown header flags 0xa/);
  t.regex(message(cat(page({ lacing: [3], granule: 0 }), eos())), /the first page is not a beginning-of-stream page/);
  t.regex(message(cat(page({ lacing: [3], flags: OGG_BOS | OGG_CONTINUED, granule: 0 }), eos())), /the first page says it continues a packet/);
  t.regex(message(cat(bos, eos(1, { serial: 99 }))), /the page at byte 31 belongs to a second logical stream \(serial 99, the first is 4660\); only files with one stream are played/);
  t.regex(message(cat(bos, eos(1, { flags: OGG_EOS | OGG_BOS }))), /the page at byte 31 is a second beginning-of-stream page/);
  t.regex(message(cat(bos, eos(2))), /sequence number 2, 1 was expected \(a page is missing\)/);
  t.regex(message(cat(bos, eos(1, { flags: OGG_EOS | OGG_CONTINUED }))), /says it continues a packet, but no packet is unfinished/);
  t.regex(message(cat(bos, page({ lacing: [255], sequence: 1 }), eos(2))), /the page at byte \d+ starts a new packet while the previous one is unfinished/);
  t.regex(message(cat(bos, page({ lacing: [255], flags: OGG_EOS, granule: -1, sequence: 1 }))), /the last packet is unfinished at the end-of-stream page/);
  t.regex(message(cat(bos, page({ lacing: [255], granule: 10, sequence: 1 }), page({ lacing: [1], flags: OGG_EOS | OGG_CONTINUED, granule: 11, sequence: 2 }))), /granule position 10, but no packet ends on it \(it must be -1\)/);
});

test('refused: anything after the end-of-stream page, a chained stream by name', (t) => {
  t.regex(message(cat(good, new Uint8Array([0, 0, 0]))), /^bad Ogg file: 3 bytes after the end-of-stream page$/);
  t.regex(message(cat(good, page({ lacing: [3], flags: OGG_BOS, granule: 0, serial: 7 }), page({ lacing: [1], flags: OGG_EOS, granule: 1, serial: 7, sequence: 1 }))), /bytes after the end-of-stream page \(a chained stream, which is not played\)/);
});
