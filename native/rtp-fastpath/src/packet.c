/*
 * The packet path of rtp-fastpath (see fastpath.h): addresses, the send queue, delivery to JS,
 * the forwarding rule with its statistics and SRTP, and the loop callbacks.
 */
#include "fastpath.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return floor((double)t.tv_sec * 1000.0 + (double)(t.tv_nsec / 1000000));
}

/* Canonical address: a v4-mapped IPv6 address is its IPv4 address. */
int canon(const struct sockaddr_storage *ss, fp_ip *ip, int *port) {
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
int parse_addr(int family, const char *str, int port, struct sockaddr_storage *out, socklen_t *len) {
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

fp_socket *lookup(fp_env *e, uint32_t h) { return h < e->cap ? e->table[h] : NULL; }

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

void flush(fp_env *e) {
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

fp_out *sq_take(fp_env *e) {
  if (e->sq_n >= SENDQ) flush(e);
  return &e->sq[e->sq_n++];
}

/* Destination of a send: none when the socket is connected to that very address. */
void set_dest(fp_out *o, const fp_socket *s, const struct sockaddr_storage *to, socklen_t to_len) {
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

/* Length of an RTP packet's header (fixed part, CSRCs, extension), or 0 when the packet is not
   RTP version 2 or its header does not fit in len bytes. */
static size_t rtp_header_len(const uint8_t *p, size_t len) {
  if (len < 12 || (p[0] >> 6) != 2) return 0;
  size_t hl = 12 + (size_t)(p[0] & 0x0f) * 4;
  if (p[0] & 0x10) {
    if (hl + 4 > len) return 0;
    hl += 4 + (size_t)rd16(p + hl + 2) * 4;
  }
  return hl > len ? 0 : hl;
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
    size_t shl = rtp_header_len(p, len);
    if (shl == 0 || len - shl < (size_t)r->in.tag) goto malformed;
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
  size_t hl = rtp_header_len(p, len);
  if (hl == 0) goto malformed;
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

void on_readable(uv_poll_t *h, int status, int events) {
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
void on_check(uv_check_t *h) {
  fp_env *e = h->data;
  deliver(e);
  flush(e);
}

void on_prepare(uv_prepare_t *h) {
  fp_env *e = h->data;
  flush(e);
}

