/*
 * rtp-fastpath's N-API glue (the design is in fastpath.h): opening and closing sockets, sends
 * from JS, setting, reading and taking back rules, and the per-thread environment.
 */
#include "fastpath.h"

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
  napi_value fc, names;
  napi_create_uint32(env, F_COUNT, &fc);
  napi_set_named_property(env, exports, "STATE_FIELDS", fc);
  /* The name of every state field, by index, so JS checks its layout field by field. */
  napi_create_array_with_length(env, F_COUNT, &names);
  for (uint32_t i = 0; i < F_COUNT; i++) {
    napi_value name;
    if (!F_NAMES[i]) {
      napi_throw_error(env, NULL, "rtp_fastpath: a state field has no name in F_NAMES");
      return NULL;
    }
    napi_create_string_utf8(env, F_NAMES[i], NAPI_AUTO_LENGTH, &name);
    napi_set_element(env, names, i, name);
  }
  napi_set_named_property(env, exports, "STATE_FIELD_NAMES", names);
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
