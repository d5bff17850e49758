/*
 * rtp-fastpath: the media bridge's native packet path (N-API, C).
 *
 * Owns the UDP sockets of RTP endpoints on the calling thread's libuv loop (one uv_poll_t per
 * socket), reads them with recvmmsg in batches and sends with sendmmsg. A socket may carry a
 * forwarding rule set from JS (plain RTP, one source -> one destination, same codec): packets
 * that match it are re-stamped (SSRC, sequence, timestamp offset, payload-type map incl.
 * telephone-event) and queued on the destination socket without entering JS; the receive
 * statistics of RFC 3550 A.1/A.8 and the counters are kept here and read by JS. Everything
 * else is handed to JS, one callback per loop turn carrying every such packet of that turn
 * (data in one Buffer, per-packet metadata in one Uint32Array). Sends from JS are queued and
 * flushed with sendmmsg once per loop turn (uv_prepare before the poll, uv_check after it).
 *
 * SRTP (RFC 3711, AES_CM_128_HMAC_SHA1_80/_32, no MKI) may be on either side of a rule: an SRTP
 * source is authenticated, replay-checked and decrypted before the re-stamp, an SRTP destination
 * gets the re-stamped packet encrypted and tagged (ROC kept). Session keys are derived in JS and
 * handed over with the rule; the per-SSRC receive state (highest index, 128-bit replay window)
 * and the send ROC cross in the state array like the stream state. Crypto is OpenSSL from the
 * node binary: AES-128-ECB over counter blocks through one EVP_CIPHER_CTX per socket and
 * direction (keyed at setRule), HMAC-SHA1 from SHA_CTX states precomputed over the padded key
 * (copied by value per packet): no allocation per packet. SRTCP stays in JS.
 *
 * Safety: every packet field read is bounds-checked against the datagram length; datagrams
 * longer than SLOT bytes are dropped (MSG_TRUNC) and counted. No allocation per packet: the
 * receive, send and JS-batch buffers are allocated once per thread. Handles are indexes into a
 * per-thread table; a closed socket's queued sends, undelivered packets and the rules that
 * point at it are purged at close, so no stale pointer or reused index is ever followed.
 */
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA1_*: the only allocation-free way to reuse an HMAC key schedule */
#include <node_api.h>
#include <uv.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLOT 2048
#define RECV_BATCH 32
#define RECV_ROUNDS 4
#define SENDQ 256
#define JSQ 256
#define META_WORDS 9
#define NO_HANDLE 0xffffffffu

/* Layout of the Float64Array that carries a rule's state between JS and C. */
enum {
  F_SSRC, F_SEQ, F_LAST_TS, F_TS_OFFSET, F_OUT_PACKETS, F_OUT_OCTETS, F_EXPECT_SSRC,
  F_BASE_SEQ, F_MAX_SEQ, F_CYCLES, F_BAD_SEQ, F_RECEIVED, F_TRANSIT, F_JITTER, F_CLOCK,
  F_TE_IN, F_TE_OUT,
  /* deltas since the last read (zeroed by read/take) */
  F_D_PACKETS_IN, F_D_BYTES_IN, F_D_PACKETS_OUT, F_D_BYTES_OUT, F_D_MALFORMED, F_LAST_AT,
  F_D_RESTARTS, F_D_FORWARDED,
  /* SRTP: receive state of the source's SSRC, send state of the destination's stream */
  F_IN_ROC, F_IN_HIGHEST_SEQ, F_IN_WINDOW, F_IN_W0, F_IN_W1, F_IN_W2, F_IN_W3, F_OUT_ROC, F_OUT_LAST_SEQ,
  F_D_AUTH_FAILURES, F_D_REPLAYS,
  F_COUNT
};

typedef struct { int v4; uint8_t a[16]; } fp_ip;

/* Layout of the Uint8Array of SRTP session keys given to setRule (one block per direction). */
#define K_IN_TAG 0
#define K_OUT_TAG 1
#define K_IN 2
#define K_OUT 52
#define K_BYTES 102
#define MAX_WINDOW 128

/* One direction's SRTP session keys (tag 0: plain RTP on that side). */
typedef struct {
  int tag;
  uint8_t salt[14];
  SHA_CTX ipad, opad;
  EVP_CIPHER_CTX *aes; /* the socket's, keyed with the session encryption key */
} fp_srtp;

typedef struct {
  int active;
  uint32_t dest;
  struct sockaddr_storage to;
  socklen_t to_len;
  fp_ip accept;
  int accept_port; /* -1: any port */
  int16_t pt_map[128];
  int te_in, te_out;
  uint32_t ssrc, expect_ssrc, ts_offset, last_ts;
  uint16_t seq;
  double out_packets, out_octets;
  int64_t base_seq, max_seq, cycles, bad_seq, received;
  int has_transit;
  int32_t transit;
  double jitter, clock;
  double d_in, d_bytes_in, d_out, d_bytes_out, d_malformed, last_at, d_restarts, d_forwarded;
  fp_srtp in, out;
  int64_t in_highest; /* ROC * 65536 + SEQ of the highest index accepted */
  unsigned __int128 in_bits; /* bit k: index in_highest - k was accepted */
  int in_window;
  uint32_t out_roc;
  uint16_t out_last_seq;
  double d_auth, d_replay;
} fp_rule;

struct fp_env;

typedef struct fp_socket {
  uv_poll_t poll; /* first: the uv handle's address is the socket's */
  struct fp_env *env;
  int fd;
  uint32_t handle;
  int family;
  int connected;
  struct sockaddr_storage peer;
  socklen_t peer_len;
  uint64_t pending_epoch;
  fp_rule rule;
  int held; /* a rule was set and its state not yet taken back (also after a purge) */
  EVP_CIPHER_CTX *aes_in, *aes_out;
  double send_errors, truncated;
} fp_socket;

typedef struct {
  fp_socket *s;
  uint16_t len;
  socklen_t to_len;
  struct sockaddr_storage to;
  uint8_t buf[SLOT];
} fp_out;

typedef struct fp_env {
  napi_env env;
  uv_loop_t *loop;
  napi_ref cb;
  napi_async_context actx;
  uv_prepare_t prepare;
  uv_check_t check;
  fp_socket **table;
  uint32_t cap;
  uint64_t epoch;
  int closing, open_handles;
  napi_async_cleanup_hook_handle cleanup;
  struct mmsghdr rmsg[RECV_BATCH];
  struct iovec riov[RECV_BATCH];
  struct sockaddr_storage rfrom[RECV_BATCH];
  uint8_t rbuf[RECV_BATCH][SLOT];
  fp_out sq[SENDQ];
  int sq_n;
  struct mmsghdr smsg[SENDQ];
  struct iovec siov[SENDQ];
  uint8_t jbuf[JSQ * SLOT];
  size_t jlen;
  uint32_t jmeta[JSQ * META_WORDS];
  int jn;
  uint8_t dec[SLOT];                 /* a decrypted SRTP packet */
  uint8_t ctr[SLOT + 16], ks[SLOT + 16]; /* AES-CM counter blocks and keystream */
} fp_env;

static uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static uint32_t rd32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void wr32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return floor((double)t.tv_sec * 1000.0 + (double)(t.tv_nsec / 1000000));
}

/* Canonical address: a v4-mapped IPv6 address is its IPv4 address. */
static int canon(const struct sockaddr_storage *ss, fp_ip *ip, int *port) {
  memset(ip, 0, sizeof *ip);
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
    ip->v4 = 1;
    memcpy(ip->a, &a->sin_addr, 4);
    *port = ntohs(a->sin_port);
    return 1;
  }
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
      ip->v4 = 1;
      memcpy(ip->a, &a->sin6_addr.s6_addr[12], 4);
    } else memcpy(ip->a, &a->sin6_addr, 16);
    *port = ntohs(a->sin6_port);
    return 1;
  }
  return 0;
}

static int ip_eq(const fp_ip *a, const fp_ip *b) { return a->v4 == b->v4 && memcmp(a->a, b->a, a->v4 ? 4 : 16) == 0; }

/* Parse an address string for a socket of `family` (a v6 socket takes IPv4 as v4-mapped). */
static int parse_addr(int family, const char *str, int port, struct sockaddr_storage *out, socklen_t *len) {
  struct in_addr a4;
  struct in6_addr a6;
  memset(out, 0, sizeof *out);
  if (port < 0 || port > 65535) return 0;
  if (inet_pton(AF_INET, str, &a4) == 1) {
    if (family == AF_INET) {
      struct sockaddr_in *s = (struct sockaddr_in *)out;
      s->sin_family = AF_INET;
      s->sin_port = htons((uint16_t)port);
      s->sin_addr = a4;
      *len = sizeof *s;
      return 1;
    }
    memset(&a6, 0, sizeof a6);
    a6.s6_addr[10] = 0xff;
    a6.s6_addr[11] = 0xff;
    memcpy(&a6.s6_addr[12], &a4, 4);
  } else if (inet_pton(AF_INET6, str, &a6) != 1 || family != AF_INET6) {
    return 0;
  }
  struct sockaddr_in6 *s = (struct sockaddr_in6 *)out;
  s->sin6_family = AF_INET6;
  s->sin6_port = htons((uint16_t)port);
  s->sin6_addr = a6;
  *len = sizeof *s;
  return 1;
}

static int same_sockaddr(const struct sockaddr_storage *a, socklen_t al, const struct sockaddr_storage *b, socklen_t bl) {
  fp_ip x, y;
  int px, py;
  if (al == 0 || bl == 0) return 0;
  if (!canon(a, &x, &px) || !canon(b, &y, &py)) return 0;
  return px == py && ip_eq(&x, &y);
}

static fp_socket *lookup(fp_env *e, uint32_t h) { return h < e->cap ? e->table[h] : NULL; }

/* ---- sending ------------------------------------------------------------------------------ */

static void send_run(fp_socket *s, struct mmsghdr *m, int n) {
  int off = 0;
  while (off < n) {
    int k = sendmmsg(s->fd, m + off, (unsigned)(n - off), MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR) continue;
      s->send_errors++; /* this datagram is lost (full buffer, ICMP error): go on with the rest */
      off++;
      continue;
    }
    if (k == 0) break;
    off += k;
  }
}

static void flush(fp_env *e) {
  int i = 0;
  while (i < e->sq_n) {
    fp_socket *s = e->sq[i].s;
    int j = i;
    while (j < e->sq_n && e->sq[j].s == s) {
      fp_out *o = &e->sq[j];
      e->siov[j].iov_base = o->buf;
      e->siov[j].iov_len = o->len;
      memset(&e->smsg[j], 0, sizeof e->smsg[j]);
      e->smsg[j].msg_hdr.msg_iov = &e->siov[j];
      e->smsg[j].msg_hdr.msg_iovlen = 1;
      if (o->to_len) {
        e->smsg[j].msg_hdr.msg_name = &o->to;
        e->smsg[j].msg_hdr.msg_namelen = o->to_len;
      }
      j++;
    }
    if (s && s->fd >= 0) send_run(s, &e->smsg[i], j - i);
    i = j;
  }
  e->sq_n = 0;
}

static fp_out *sq_take(fp_env *e) {
  if (e->sq_n >= SENDQ) flush(e);
  return &e->sq[e->sq_n++];
}

/* Destination of a send: none when the socket is connected to that very address. */
static void set_dest(fp_out *o, const fp_socket *s, const struct sockaddr_storage *to, socklen_t to_len) {
  if (s->connected && same_sockaddr(&s->peer, s->peer_len, to, to_len)) {
    o->to_len = 0;
  } else {
    o->to = *to;
    o->to_len = to_len;
  }
}

/* ---- delivering to JS --------------------------------------------------------------------- */

static void deliver(fp_env *e) {
  if (e->jn == 0) return;
  int n = e->jn;
  size_t len = e->jlen;
  e->jn = 0;
  e->jlen = 0;
  e->epoch++;
  if (!e->cb || e->closing) return;
  napi_env env = e->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value argv[3], fn, recv, ab, result;
  void *data = NULL;
  int ok = napi_create_buffer_copy(env, len, e->jbuf, NULL, &argv[0]) == napi_ok &&
           napi_create_arraybuffer(env, (size_t)n * META_WORDS * 4, &data, &ab) == napi_ok;
  if (ok) {
    memcpy(data, e->jmeta, (size_t)n * META_WORDS * 4);
    ok = napi_create_typedarray(env, napi_uint32_array, (size_t)n * META_WORDS, ab, 0, &argv[1]) == napi_ok &&
         napi_create_uint32(env, (uint32_t)n, &argv[2]) == napi_ok &&
         napi_get_reference_value(env, e->cb, &fn) == napi_ok && napi_get_global(env, &recv) == napi_ok;
  }
  if (ok) {
    napi_status st = napi_make_callback(env, e->actx, recv, fn, 3, argv, &result);
    if (st == napi_pending_exception) {
      napi_value ex;
      if (napi_get_and_clear_last_exception(env, &ex) == napi_ok) napi_fatal_exception(env, ex);
    }
  }
  napi_close_handle_scope(env, scope);
}

static void to_js(fp_env *e, fp_socket *s, const uint8_t *p, size_t len, const struct sockaddr_storage *from) {
  if (e->jn >= JSQ || e->jlen + len > sizeof e->jbuf) deliver(e);
  if (s->fd < 0) return; /* JS closed it while handling the batch */
  uint32_t *m = &e->jmeta[(size_t)e->jn * META_WORDS];
  memset(m, 0, META_WORDS * 4);
  m[0] = s->handle;
  m[1] = (uint32_t)e->jlen;
  m[2] = (uint32_t)len;
  if (from->ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)from;
    m[3] = ntohs(a->sin_port);
    m[4] = 4;
    memcpy(&m[5], &a->sin_addr, 4);
  } else if (from->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)from;
    m[3] = ntohs(a->sin6_port);
    m[4] = 6;
    memcpy(&m[5], &a->sin6_addr, 16);
  }
  memcpy(e->jbuf + e->jlen, p, len);
  e->jlen += len;
  e->jn++;
  s->pending_epoch = e->epoch;
}

/* ---- the forwarding rule ------------------------------------------------------------------ */

static void stats_update(fp_rule *r, int64_t seq, uint32_t ts, double now) {
  int64_t udelta = (seq - r->max_seq) & 0xffff;
  if (udelta < 3000) {
    if (seq < r->max_seq) r->cycles += 65536;
    r->max_seq = seq;
  } else if (udelta <= 65536 - 100) {
    if (seq != r->bad_seq) {
      r->bad_seq = (seq + 1) & 0xffff;
      return;
    }
    r->base_seq = seq;
    r->max_seq = seq;
    r->cycles = 0;
    r->bad_seq = 65537;
    r->received = 0;
    r->d_restarts++;
  }
  r->received++;
  int64_t arrival = llround(now * r->clock / 1000.0);
  int32_t transit = (int32_t)(uint32_t)((uint64_t)arrival - ts);
  if (r->has_transit) {
    int32_t d = (int32_t)((uint32_t)transit - (uint32_t)r->transit);
    double ad = fabs((double)d);
    r->jitter += (ad - r->jitter) / 16;
  }
  r->transit = transit;
  r->has_transit = 1;
}

/* ---- SRTP --------------------------------------------------------------------------------- */

/* RFC 3711 3.3.1 index estimate, as protocols/media/srtp/replay.ts's estimateRoc. */
static uint32_t estimate_roc(uint32_t roc, uint16_t highest_seq, uint16_t seq) {
  if (highest_seq < 32768) {
    if ((int)seq - (int)highest_seq > 32768) return roc == 0 ? 0 : roc - 1;
    return roc;
  }
  if ((int)highest_seq - 32768 > (int)seq) return roc + 1;
  return roc;
}

/* out[i] = src[i] ^ AES-CM keystream (IV of RFC 3711 4.1.1); out may be src. n <= SLOT. */
static int aes_cm(fp_env *e, const fp_srtp *k, uint32_t ssrc, uint32_t roc, uint16_t seq, const uint8_t *src, size_t n, uint8_t *out) {
  if (n == 0) return 1;
  if (n > SLOT) return 0;
  uint8_t iv[16];
  memcpy(iv, k->salt, 14);
  iv[14] = iv[15] = 0;
  iv[4] ^= (uint8_t)(ssrc >> 24); iv[5] ^= (uint8_t)(ssrc >> 16); iv[6] ^= (uint8_t)(ssrc >> 8); iv[7] ^= (uint8_t)ssrc;
  iv[8] ^= (uint8_t)(roc >> 24); iv[9] ^= (uint8_t)(roc >> 16); iv[10] ^= (uint8_t)(roc >> 8); iv[11] ^= (uint8_t)roc;
  iv[12] ^= (uint8_t)(seq >> 8); iv[13] ^= (uint8_t)seq;
  size_t blocks = (n + 15) / 16;
  for (size_t b = 0; b < blocks; b++) {
    memcpy(e->ctr + b * 16, iv, 14);
    e->ctr[b * 16 + 14] = (uint8_t)(b >> 8);
    e->ctr[b * 16 + 15] = (uint8_t)b;
  }
  int outl = 0;
  if (EVP_EncryptUpdate(k->aes, e->ks, &outl, e->ctr, (int)(blocks * 16)) != 1 || outl != (int)(blocks * 16)) return 0;
  for (size_t i = 0; i < n; i++) out[i] = src[i] ^ e->ks[i];
  return 1;
}

/* HMAC-SHA1(auth key, data || ROC) from the precomputed pad states. */
static void srtp_mac(const fp_srtp *k, const uint8_t *data, size_t n, uint32_t roc, uint8_t mac[20]) {
  SHA_CTX c = k->ipad;
  uint8_t r[4], inner[20];
  wr32(r, roc);
  SHA1_Update(&c, data, n);
  SHA1_Update(&c, r, 4);
  SHA1_Final(inner, &c);
  c = k->opad;
  SHA1_Update(&c, inner, 20);
  SHA1_Final(mac, &c);
}

static void window_accept(fp_rule *r, int64_t index) {
  if (index > r->in_highest) {
    int64_t d = index - r->in_highest;
    r->in_bits = d >= MAX_WINDOW ? 0 : r->in_bits << d;
    r->in_highest = index;
  }
  r->in_bits |= (unsigned __int128)1 << (r->in_highest - index);
}

/* 1: consumed (forwarded, or dropped as malformed); 0: JS decides. */
static int forward(fp_env *e, fp_socket *s, const uint8_t *p, size_t len, const struct sockaddr_storage *from) {
  fp_rule *r = &s->rule;
  fp_ip ip;
  int port;
  if (!canon(from, &ip, &port)) return 0;
  if (!ip_eq(&ip, &r->accept) || (r->accept_port >= 0 && port != r->accept_port)) return 0; /* JS counts it */
  int srtp_in = r->in.tag > 0, authed = 0;
  int64_t index = 0;
  if (srtp_in) {
    /* As SrtpReceiveContext.unprotectRtp: authenticate, replay check, decrypt; the window moves
       only once the packet is consumed here (a packet left to JS is checked again by JS). */
    if (len < 12 || (p[0] >> 6) != 2) goto malformed;
    size_t shl = 12 + (size_t)(p[0] & 0x0f) * 4;
    if (p[0] & 0x10) {
      if (shl + 4 > len) goto malformed;
      shl += 4 + (size_t)rd16(p + shl + 2) * 4;
    }
    if (shl > len || len - shl < (size_t)r->in.tag) goto malformed;
    if (rd32(p + 8) != r->expect_ssrc) return 0;
    size_t end = len - (size_t)r->in.tag;
    uint16_t sseq = rd16(p + 2);
    uint32_t roc = estimate_roc((uint32_t)(r->in_highest >> 16), (uint16_t)(r->in_highest & 0xffff), sseq);
    index = ((int64_t)roc << 16) | sseq;
    uint8_t mac[20];
    srtp_mac(&r->in, p, end, roc, mac);
    if (CRYPTO_memcmp(mac, p + end, (size_t)r->in.tag) != 0) {
      r->d_auth++;
      return 1;
    }
    if (index <= r->in_highest) {
      int64_t back = r->in_highest - index;
      if (back >= r->in_window || ((r->in_bits >> back) & 1)) {
        r->d_replay++;
        return 1;
      }
    }
    authed = 1;
    memcpy(e->dec, p, shl);
    if (!aes_cm(e, &r->in, r->expect_ssrc, roc, sseq, p + shl, end - shl, e->dec + shl)) return 0;
    p = e->dec;
    len = end;
  }
  if (len < 12 || (p[0] >> 6) != 2) goto malformed;
  size_t hl = 12 + (size_t)(p[0] & 0x0f) * 4;
  if (p[0] & 0x10) {
    if (hl + 4 > len) goto malformed;
    hl += 4 + (size_t)rd16(p + hl + 2) * 4;
  }
  if (hl > len) goto malformed;
  size_t pl = len - hl;
  if (p[0] & 0x20) {
    uint8_t pad = p[len - 1];
    if (pad == 0 || pad > pl) goto malformed;
    pl -= pad;
  }
  if (rd32(p + 8) != r->expect_ssrc) return 0;
  int pt = p[1] & 0x7f, te = 0, out_pt;
  if (r->te_in >= 0 && pt == r->te_in) {
    te = 1;
    out_pt = r->te_out;
  } else {
    out_pt = r->pt_map[pt];
    if (out_pt < 0) return 0;
  }
  fp_socket *d = lookup(e, r->dest);
  if (!d || d->fd < 0 || pl + 12 + (size_t)r->out.tag > SLOT) return 0;
  if (srtp_in) window_accept(r, index);

  uint32_t ts = rd32(p + 4);
  double now = now_ms();
  r->d_in++;
  r->d_bytes_in += (double)len;
  r->last_at = now;
  stats_update(r, rd16(p + 2), ts, now);

  uint32_t ots = ts + r->ts_offset;
  if (!te) {
    r->last_ts = ots;
    r->d_forwarded++;
  } else {
    uint32_t diff = ots - r->last_ts;
    if (diff != 0 && diff < 0x80000000u) r->last_ts = ots;
  }
  uint16_t oseq = r->seq++;
  r->out_packets++;
  r->out_octets += (double)pl;
  r->d_out++;
  r->d_bytes_out += (double)pl;

  fp_out *o = sq_take(e);
  o->s = d;
  o->len = (uint16_t)(12 + pl);
  o->buf[0] = 0x80;
  o->buf[1] = (uint8_t)((p[1] & 0x80) | (out_pt & 0x7f));
  wr16(o->buf + 2, oseq);
  wr32(o->buf + 4, ots);
  wr32(o->buf + 8, r->ssrc);
  memcpy(o->buf + 12, p + hl, pl);
  if (r->out.tag) {
    /* As SrtpSendContext.protectRtp: the ROC follows the SEQs sent. */
    uint32_t roc = estimate_roc(r->out_roc, r->out_last_seq, oseq);
    if ((((int64_t)roc << 16) | oseq) > (((int64_t)r->out_roc << 16) | r->out_last_seq)) {
      r->out_roc = roc;
      r->out_last_seq = oseq;
    }
    uint8_t mac[20];
    if (!aes_cm(e, &r->out, r->ssrc, roc, oseq, o->buf + 12, pl, o->buf + 12)) {
      e->sq_n--; /* cannot happen (lengths checked above); never send it in clear */
      return 1;
    }
    srtp_mac(&r->out, o->buf, 12 + pl, roc, mac);
    memcpy(o->buf + 12 + pl, mac, (size_t)r->out.tag);
    o->len = (uint16_t)(o->len + r->out.tag);
  }
  set_dest(o, d, &r->to, r->to_len);
  return 1;
malformed:
  if (authed) window_accept(r, index); /* authenticated, then malformed: as JS */
  r->d_malformed++;
  return 1;
}

static void handle_packet(fp_env *e, fp_socket *s, const uint8_t *p, size_t len, const struct sockaddr_storage *from) {
  /* Once a packet of this socket waits for JS in this turn, the following ones do too (order). */
  if (s->rule.active && s->pending_epoch != e->epoch && len >= 2 && !(p[1] >= 192 && p[1] <= 223)) {
    if (forward(e, s, p, len, from)) return;
  }
  to_js(e, s, p, len, from);
}

static void on_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  fp_socket *s = (fp_socket *)h;
  fp_env *e = s->env;
  if (s->fd < 0) return;
  if (status < 0) {
    int err = 0;
    socklen_t l = sizeof err;
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &l); /* clears a pending ICMP error */
  }
  for (int round = 0; round < RECV_ROUNDS; round++) {
    for (int i = 0; i < RECV_BATCH; i++) {
      e->riov[i].iov_base = e->rbuf[i];
      e->riov[i].iov_len = SLOT;
      memset(&e->rmsg[i], 0, sizeof e->rmsg[i]);
      e->rmsg[i].msg_hdr.msg_iov = &e->riov[i];
      e->rmsg[i].msg_hdr.msg_iovlen = 1;
      e->rmsg[i].msg_hdr.msg_name = &e->rfrom[i];
      e->rmsg[i].msg_hdr.msg_namelen = sizeof e->rfrom[i];
    }
    int n = recvmmsg(s->fd, e->rmsg, RECV_BATCH, MSG_DONTWAIT, NULL);
    if (n < 0) {
      if (errno == EINTR || errno == ECONNREFUSED) continue; /* an ICMP error reported once */
      break;
    }
    for (int i = 0; i < n && s->fd >= 0; i++) {
      if (e->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
        s->truncated++;
        continue;
      }
      handle_packet(e, s, e->rbuf[i], e->rmsg[i].msg_len, &e->rfrom[i]);
    }
    if (n < RECV_BATCH || s->fd < 0) break;
  }
}

/* Every loop turn: JS gets its packets after the poll phase; queued sends leave. */
static void on_check(uv_check_t *h) {
  fp_env *e = h->data;
  deliver(e);
  flush(e);
}

static void on_prepare(uv_prepare_t *h) {
  fp_env *e = h->data;
  flush(e);
}

/* ---- N-API glue --------------------------------------------------------------------------- */

static fp_env *get_env(napi_env env) {
  void *d = NULL;
  napi_get_instance_data(env, &d);
  return d;
}

static napi_value num(napi_env env, double v) {
  napi_value r;
  napi_create_double(env, v, &r);
  return r;
}

static napi_value boolean(napi_env env, int v) {
  napi_value r;
  napi_get_boolean(env, v != 0, &r);
  return r;
}

static int arg_u32(napi_env env, napi_value v, uint32_t *out) { return napi_get_value_uint32(env, v, out) == napi_ok; }
static int arg_i32(napi_env env, napi_value v, int32_t *out) { return napi_get_value_int32(env, v, out) == napi_ok; }

static int arg_str(napi_env env, napi_value v, char *buf, size_t cap) {
  size_t n = 0;
  return napi_get_value_string_utf8(env, v, buf, cap, &n) == napi_ok && n < cap - 1;
}

static void throw_type(napi_env env, const char *msg) { napi_throw_type_error(env, NULL, msg); }

#define ARGS(n)                                       \
  size_t argc = n;                                    \
  napi_value argv[n];                                 \
  fp_env *e = get_env(env);                           \
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL); \
  if (!e || argc < n) { throw_type(env, "rtp-fastpath: missing arguments"); return NULL; }

static void on_closed(uv_handle_t *h);

static void release_socket(fp_env *e, fp_socket *s) {
  e->table[s->handle] = NULL;
  for (int i = 0; i < e->sq_n; i++)
    if (e->sq[i].s == s) e->sq[i].s = NULL;
  for (int i = 0; i < e->jn; i++)
    if (e->jmeta[(size_t)i * META_WORDS] == s->handle) e->jmeta[(size_t)i * META_WORDS] = NO_HANDLE;
  for (uint32_t i = 0; i < e->cap; i++) {
    fp_socket *o = e->table[i];
    if (o && o->rule.active && o->rule.dest == s->handle) o->rule.active = 0;
  }
  uv_poll_stop(&s->poll);
  close(s->fd);
  s->fd = -1;
  uv_close((uv_handle_t *)&s->poll, on_closed);
}

/* open(family 4|6, address, port) -> handle >= 0, or -errno */
static napi_value js_open(napi_env env, napi_callback_info info) {
  ARGS(3)
  uint32_t fam, port;
  char addr[64];
  if (!arg_u32(env, argv[0], &fam) || !arg_str(env, argv[1], addr, sizeof addr) || !arg_u32(env, argv[2], &port) || (fam != 4 && fam != 6)) {
    throw_type(env, "open(family 4|6, address, port)");
    return NULL;
  }
  int af = fam == 6 ? AF_INET6 : AF_INET;
  struct sockaddr_storage sa;
  socklen_t sl;
  if (!parse_addr(af, addr, (int)port, &sa, &sl)) return num(env, -EINVAL);
  int fd = socket(af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return num(env, -errno);
  int zero = 0, buf = 1 << 20;
  if (af == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  if (bind(fd, (struct sockaddr *)&sa, sl) < 0) {
    int err = errno;
    close(fd);
    return num(env, -err);
  }
  uint32_t h = 0;
  while (h < e->cap && e->table[h]) h++;
  if (h == e->cap) {
    uint32_t cap = e->cap ? e->cap * 2 : 64;
    fp_socket **t = realloc(e->table, cap * sizeof *t);
    if (!t) {
      close(fd);
      return num(env, -ENOMEM);
    }
    memset(t + e->cap, 0, (cap - e->cap) * sizeof *t);
    e->table = t;
    e->cap = cap;
  }
  fp_socket *s = calloc(1, sizeof *s);
  if (!s || uv_poll_init(e->loop, &s->poll, fd) != 0) {
    free(s);
    close(fd);
    return num(env, -ENOMEM);
  }
  s->env = e;
  s->fd = fd;
  s->handle = h;
  s->family = af;
  e->table[h] = s;
  e->open_handles++;
  uv_poll_start(&s->poll, UV_READABLE, on_readable);
  return num(env, h);
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  ARGS(1)
  uint32_t h;
  if (!arg_u32(env, argv[0], &h)) return NULL;
  fp_socket *s = lookup(e, h);
  if (s) release_socket(e, s);
  return NULL;
}

/* connect(h, address, port) -> 0 or -errno; disconnect(h) */
static napi_value js_connect(napi_env env, napi_callback_info info) {
  ARGS(3)
  uint32_t h, port;
  char addr[64];
  fp_socket *s;
  if (!arg_u32(env, argv[0], &h) || !(s = lookup(e, h)) || !arg_str(env, argv[1], addr, sizeof addr) || !arg_u32(env, argv[2], &port)) return num(env, -EINVAL);
  struct sockaddr_storage sa;
  socklen_t sl;
  if (!parse_addr(s->family, addr, (int)port, &sa, &sl)) return num(env, -EINVAL);
  if (connect(s->fd, (struct sockaddr *)&sa, sl) < 0) return num(env, -errno);
  s->peer = sa;
  s->peer_len = sl;
  s->connected = 1;
  return num(env, 0);
}

static napi_value js_disconnect(napi_env env, napi_callback_info info) {
  ARGS(1)
  uint32_t h;
  fp_socket *s;
  if (!arg_u32(env, argv[0], &h) || !(s = lookup(e, h)) || !s->connected) return NULL;
  struct sockaddr sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_family = AF_UNSPEC;
  connect(s->fd, &sa, sizeof sa);
  s->connected = 0;
  s->peer_len = 0;
  return NULL;
}

/* send(h, data, address | null, port): queued; leaves with the next flush. -> 0 or -errno */
static napi_value js_send(napi_env env, napi_callback_info info) {
  ARGS(4)
  uint32_t h, port;
  fp_socket *s;
  napi_typedarray_type type;
  size_t len;
  void *data;
  napi_value ab;
  size_t off;
  if (!arg_u32(env, argv[0], &h) || !(s = lookup(e, h))) return num(env, -EBADF);
  if (napi_get_typedarray_info(env, argv[1], &type, &len, &data, &ab, &off) != napi_ok || type != napi_uint8_array) {
    throw_type(env, "send: data must be a Uint8Array");
    return NULL;
  }
  napi_valuetype at;
  napi_typeof(env, argv[2], &at);
  struct sockaddr_storage sa;
  socklen_t sl = 0;
  if (at == napi_string) {
    char addr[64];
    if (!arg_str(env, argv[2], addr, sizeof addr) || !arg_u32(env, argv[3], &port) || !parse_addr(s->family, addr, (int)port, &sa, &sl)) return num(env, -EINVAL);
  } else if (!s->connected) {
    return num(env, -EDESTADDRREQ);
  }
  if (len > SLOT) { /* too big for a queue slot: sent at once */
    ssize_t r = sl ? sendto(s->fd, data, len, MSG_DONTWAIT, (struct sockaddr *)&sa, sl) : send(s->fd, data, len, MSG_DONTWAIT);
    if (r < 0) s->send_errors++;
    return num(env, r < 0 ? -errno : 0);
  }
  fp_out *o = sq_take(e);
  o->s = s;
  o->len = (uint16_t)len;
  memcpy(o->buf, data, len);
  if (sl) set_dest(o, s, &sa, sl);
  else o->to_len = 0;
  return num(env, 0);
}

static int get_f64(napi_env env, napi_value v, double **out) {
  napi_typedarray_type type;
  size_t len, off;
  void *data;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &len, &data, &ab, &off) != napi_ok || type != napi_float64_array || len < F_COUNT) return 0;
  *out = data;
  return 1;
}

static void write_state(fp_rule *r, double *f) {
  f[F_SSRC] = r->ssrc;
  f[F_SEQ] = r->seq;
  f[F_LAST_TS] = r->last_ts;
  f[F_TS_OFFSET] = r->ts_offset;
  f[F_OUT_PACKETS] = r->out_packets;
  f[F_OUT_OCTETS] = r->out_octets;
  f[F_EXPECT_SSRC] = r->expect_ssrc;
  f[F_BASE_SEQ] = (double)r->base_seq;
  f[F_MAX_SEQ] = (double)r->max_seq;
  f[F_CYCLES] = (double)r->cycles;
  f[F_BAD_SEQ] = (double)r->bad_seq;
  f[F_RECEIVED] = (double)r->received;
  f[F_TRANSIT] = r->has_transit ? r->transit : NAN;
  f[F_JITTER] = r->jitter;
  f[F_CLOCK] = r->clock;
  f[F_TE_IN] = r->te_in;
  f[F_TE_OUT] = r->te_out;
  f[F_D_PACKETS_IN] = r->d_in;
  f[F_D_BYTES_IN] = r->d_bytes_in;
  f[F_D_PACKETS_OUT] = r->d_out;
  f[F_D_BYTES_OUT] = r->d_bytes_out;
  f[F_D_MALFORMED] = r->d_malformed;
  f[F_LAST_AT] = r->last_at;
  f[F_D_RESTARTS] = r->d_restarts;
  f[F_D_FORWARDED] = r->d_forwarded;
  f[F_IN_ROC] = (double)(uint32_t)(r->in_highest >> 16);
  f[F_IN_HIGHEST_SEQ] = (double)(r->in_highest & 0xffff);
  f[F_IN_WINDOW] = r->in_window;
  unsigned __int128 bits = r->in_bits;
  if (r->in_window < MAX_WINDOW) bits &= ((unsigned __int128)1 << r->in_window) - 1;
  for (int w = 0; w < 4; w++) f[F_IN_W0 + w] = (double)(uint32_t)(bits >> (32 * w));
  f[F_OUT_ROC] = r->out_roc;
  f[F_OUT_LAST_SEQ] = r->out_last_seq;
  f[F_D_AUTH_FAILURES] = r->d_auth;
  f[F_D_REPLAYS] = r->d_replay;
  r->d_in = r->d_bytes_in = r->d_out = r->d_bytes_out = r->d_malformed = r->d_restarts = r->d_forwarded = 0;
  r->d_auth = r->d_replay = 0;
}

static int u32_field(double v, uint32_t *out) {
  if (!(v >= 0 && v <= 4294967295.0) || v != floor(v)) return 0;
  *out = (uint32_t)v;
  return 1;
}

/* HMAC-SHA1 pad states of a 20-byte key (RFC 2104). */
static void hmac_pads(fp_srtp *k, const uint8_t key[20]) {
  uint8_t pad[64];
  memset(pad, 0x36, sizeof pad);
  for (int i = 0; i < 20; i++) pad[i] ^= key[i];
  SHA1_Init(&k->ipad);
  SHA1_Update(&k->ipad, pad, 64);
  memset(pad, 0x5c, sizeof pad);
  for (int i = 0; i < 20; i++) pad[i] ^= key[i];
  SHA1_Init(&k->opad);
  SHA1_Update(&k->opad, pad, 64);
  OPENSSL_cleanse(pad, sizeof pad);
}

/* One direction's keys from the key block at `at` (enc key 16, salt 14, auth key 20). */
static int srtp_keys(fp_srtp *k, int tag, EVP_CIPHER_CTX **ctx, const uint8_t *b) {
  if (tag == 0) return 1;
  if (tag != 4 && tag != 10) return 0;
  if (!*ctx && !(*ctx = EVP_CIPHER_CTX_new())) return 0;
  if (EVP_EncryptInit_ex(*ctx, EVP_aes_128_ecb(), NULL, b, NULL) != 1 || EVP_CIPHER_CTX_set_padding(*ctx, 0) != 1) return 0;
  k->tag = tag;
  k->aes = *ctx;
  memcpy(k->salt, b + 16, 14);
  hmac_pads(k, b + 30);
  return 1;
}

static void wipe_rule(fp_rule *r) {
  OPENSSL_cleanse(&r->in, sizeof r->in);
  OPENSSL_cleanse(&r->out, sizeof r->out);
}

/*
 * setRule(src, dest, state: Float64Array, toAddress, toPort, acceptAddress, acceptPort (-1: any),
 *         ptMap: Int32Array(128) (-1: to JS), srtp?: Uint8Array(K_BYTES) | null)
 *   -> true, or false when a field is out of range.
 * srtp: [in tag, out tag (0: plain; 4 or 10)], then the session keys of the source's receive
 * side and of the destination's send side (AES key 16, salt 14, HMAC key 20 each).
 */
static napi_value js_set_rule(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  fp_env *e = get_env(env);
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (!e || argc < 8) {
    throw_type(env, "rtp-fastpath: missing arguments");
    return NULL;
  }
  uint32_t hs, hd, to_port;
  int32_t accept_port;
  fp_socket *s, *d;
  double *f;
  char to[64], acc[64];
  if (!arg_u32(env, argv[0], &hs) || !(s = lookup(e, hs)) || !arg_u32(env, argv[1], &hd) || !(d = lookup(e, hd)) || !get_f64(env, argv[2], &f) ||
      !arg_str(env, argv[3], to, sizeof to) || !arg_u32(env, argv[4], &to_port) || !arg_str(env, argv[5], acc, sizeof acc) ||
      !arg_i32(env, argv[6], &accept_port) || accept_port > 65535)
    return boolean(env, 0);
  napi_typedarray_type type;
  size_t len, off;
  void *map;
  napi_value ab;
  if (napi_get_typedarray_info(env, argv[7], &type, &len, &map, &ab, &off) != napi_ok || type != napi_int32_array || len < 128) return boolean(env, 0);
  fp_rule r;
  memset(&r, 0, sizeof r);
  struct sockaddr_storage asa;
  socklen_t asl;
  int ignored;
  if (!parse_addr(d->family, to, (int)to_port, &r.to, &r.to_len) || !parse_addr(AF_INET6, acc, 0, &asa, &asl) || !canon(&asa, &r.accept, &ignored)) return boolean(env, 0);
  uint32_t seq, last_ts, ts_off, ssrc, expect;
  if (!u32_field(f[F_SSRC], &ssrc) || !u32_field(f[F_SEQ], &seq) || seq > 0xffff || !u32_field(f[F_LAST_TS], &last_ts) || !u32_field(f[F_TS_OFFSET], &ts_off) ||
      !u32_field(f[F_EXPECT_SSRC], &expect) || !(f[F_CLOCK] > 0))
    return boolean(env, 0);
  r.dest = hd;
  r.accept_port = accept_port;
  const int32_t *m = map;
  for (int i = 0; i < 128; i++) r.pt_map[i] = (int16_t)(m[i] >= 0 && m[i] < 128 ? m[i] : -1);
  r.te_in = f[F_TE_IN] >= 0 && f[F_TE_IN] < 128 ? (int)f[F_TE_IN] : -1;
  r.te_out = f[F_TE_OUT] >= 0 && f[F_TE_OUT] < 128 ? (int)f[F_TE_OUT] : -1;
  if (r.te_out < 0) r.te_in = -1;
  r.ssrc = ssrc;
  r.seq = (uint16_t)seq;
  r.last_ts = last_ts;
  r.ts_offset = ts_off;
  r.expect_ssrc = expect;
  r.out_packets = f[F_OUT_PACKETS];
  r.out_octets = f[F_OUT_OCTETS];
  r.base_seq = (int64_t)f[F_BASE_SEQ];
  r.max_seq = (int64_t)f[F_MAX_SEQ];
  r.cycles = (int64_t)f[F_CYCLES];
  r.bad_seq = (int64_t)f[F_BAD_SEQ];
  r.received = (int64_t)f[F_RECEIVED];
  r.has_transit = !isnan(f[F_TRANSIT]);
  r.transit = r.has_transit ? (int32_t)f[F_TRANSIT] : 0;
  r.jitter = f[F_JITTER];
  r.clock = f[F_CLOCK];
  napi_valuetype kt = napi_undefined;
  if (argc >= 9) napi_typeof(env, argv[8], &kt);
  if (kt != napi_undefined && kt != napi_null) {
    const uint8_t *k;
    size_t klen;
    if (napi_get_typedarray_info(env, argv[8], &type, &klen, (void **)&k, &ab, &off) != napi_ok || type != napi_uint8_array || klen < K_BYTES) return boolean(env, 0);
    uint32_t roc, hseq, win, out_roc, out_last;
    if (k[K_IN_TAG]) {
      if (!u32_field(f[F_IN_ROC], &roc) || !u32_field(f[F_IN_HIGHEST_SEQ], &hseq) || hseq > 0xffff || !u32_field(f[F_IN_WINDOW], &win) || win < 1 || win > MAX_WINDOW) return boolean(env, 0);
      r.in_highest = ((int64_t)roc << 16) | hseq;
      r.in_window = (int)win;
      for (int w = 0; w < 4; w++) {
        uint32_t word;
        if (!u32_field(f[F_IN_W0 + w], &word)) return boolean(env, 0);
        r.in_bits |= (unsigned __int128)word << (32 * w);
      }
      r.in_bits |= 1; /* the highest index itself was accepted */
    }
    if (k[K_OUT_TAG]) {
      if (!u32_field(f[F_OUT_ROC], &out_roc) || !u32_field(f[F_OUT_LAST_SEQ], &out_last) || out_last > 0xffff) return boolean(env, 0);
      r.out_roc = out_roc;
      r.out_last_seq = (uint16_t)out_last;
    }
    if (!srtp_keys(&r.in, k[K_IN_TAG], &s->aes_in, k + K_IN) || !srtp_keys(&r.out, k[K_OUT_TAG], &s->aes_out, k + K_OUT)) {
      wipe_rule(&r);
      return boolean(env, 0);
    }
  }
  r.active = 1;
  wipe_rule(&s->rule);
  s->rule = r;
  s->held = 1;
  wipe_rule(&r);
  return boolean(env, 1);
}

/* takeRule(src, out) / readRule(src, out): state and deltas into out; take also clears the rule. */
static napi_value rule_out(napi_env env, napi_callback_info info, int take) {
  ARGS(2)
  uint32_t h;
  fp_socket *s;
  double *f;
  if (!arg_u32(env, argv[0], &h) || !(s = lookup(e, h)) || !get_f64(env, argv[1], &f) || !s->held) return boolean(env, 0);
  write_state(&s->rule, f);
  if (take) {
    s->rule.active = 0;
    s->held = 0;
    wipe_rule(&s->rule);
  }
  return boolean(env, 1);
}
static napi_value js_take_rule(napi_env env, napi_callback_info info) { return rule_out(env, info, 1); }
static napi_value js_read_rule(napi_env env, napi_callback_info info) { return rule_out(env, info, 0); }

/* errors(h) -> [sendErrors, truncated] since open */
static napi_value js_errors(napi_env env, napi_callback_info info) {
  ARGS(1)
  uint32_t h;
  fp_socket *s;
  napi_value arr;
  napi_create_array_with_length(env, 2, &arr);
  if (!arg_u32(env, argv[0], &h) || !(s = lookup(e, h))) return arr;
  napi_set_element(env, arr, 0, num(env, s->send_errors));
  napi_set_element(env, arr, 1, num(env, s->truncated));
  return arr;
}

/* onPackets(fn(data: Buffer, meta: Uint32Array, count)): this thread's receiver of JS-bound packets. */
static napi_value js_on_packets(napi_env env, napi_callback_info info) {
  ARGS(1)
  napi_valuetype t;
  napi_typeof(env, argv[0], &t);
  if (t != napi_function) {
    throw_type(env, "onPackets(fn)");
    return NULL;
  }
  if (e->cb) napi_delete_reference(env, e->cb);
  napi_create_reference(env, argv[0], 1, &e->cb);
  if (!e->actx) {
    napi_value name;
    napi_create_string_utf8(env, "rtp-fastpath", NAPI_AUTO_LENGTH, &name);
    napi_async_init(env, NULL, name, &e->actx);
  }
  return NULL;
}

static void maybe_free(fp_env *e) {
  if (e->closing && e->open_handles == 0) {
    napi_remove_async_cleanup_hook(e->cleanup);
    free(e->table);
    free(e);
  }
}

static void on_closed(uv_handle_t *h) {
  fp_socket *s = (fp_socket *)h;
  fp_env *e = s->env;
  wipe_rule(&s->rule);
  EVP_CIPHER_CTX_free(s->aes_in);
  EVP_CIPHER_CTX_free(s->aes_out);
  free(s);
  e->open_handles--;
  maybe_free(e);
}

static void on_loop_handle_closed(uv_handle_t *h) {
  fp_env *e = h->data;
  e->open_handles--;
  maybe_free(e);
}

/* The thread (env) is ending: close every handle on its loop before the loop is closed. */
static void on_cleanup(napi_async_cleanup_hook_handle handle, void *arg) {
  (void)handle;
  fp_env *e = arg;
  e->closing = 1;
  e->sq_n = 0;
  e->jn = 0;
  e->open_handles++; /* held while we walk */
  for (uint32_t i = 0; i < e->cap; i++)
    if (e->table[i]) release_socket(e, e->table[i]);
  uv_close((uv_handle_t *)&e->prepare, on_loop_handle_closed);
  uv_close((uv_handle_t *)&e->check, on_loop_handle_closed);
  e->open_handles--;
  maybe_free(e);
}

static napi_value init(napi_env env, napi_value exports) {
  fp_env *e = calloc(1, sizeof *e);
  if (!e) {
    napi_throw_error(env, NULL, "rtp-fastpath: out of memory");
    return NULL;
  }
  e->env = env;
  e->epoch = 1;
  if (napi_get_uv_event_loop(env, &e->loop) != napi_ok) {
    free(e);
    napi_throw_error(env, NULL, "rtp-fastpath: no event loop");
    return NULL;
  }
  uv_prepare_init(e->loop, &e->prepare);
  uv_check_init(e->loop, &e->check);
  e->prepare.data = e;
  e->check.data = e;
  uv_prepare_start(&e->prepare, on_prepare);
  uv_check_start(&e->check, on_check);
  uv_unref((uv_handle_t *)&e->prepare);
  uv_unref((uv_handle_t *)&e->check);
  e->open_handles = 2;
  napi_set_instance_data(env, e, NULL, NULL);
  napi_add_async_cleanup_hook(env, on_cleanup, e, &e->cleanup);
  napi_property_descriptor props[] = {
    {"open", NULL, js_open, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL},
    {"connect", NULL, js_connect, NULL, NULL, NULL, napi_default, NULL},
    {"disconnect", NULL, js_disconnect, NULL, NULL, NULL, napi_default, NULL},
    {"send", NULL, js_send, NULL, NULL, NULL, napi_default, NULL},
    {"setRule", NULL, js_set_rule, NULL, NULL, NULL, napi_default, NULL},
    {"takeRule", NULL, js_take_rule, NULL, NULL, NULL, napi_default, NULL},
    {"readRule", NULL, js_read_rule, NULL, NULL, NULL, napi_default, NULL},
    {"errors", NULL, js_errors, NULL, NULL, NULL, napi_default, NULL},
    {"onPackets", NULL, js_on_packets, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value fc;
  napi_create_uint32(env, F_COUNT, &fc);
  napi_set_named_property(env, exports, "STATE_FIELDS", fc);
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
