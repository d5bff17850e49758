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
#ifndef RTP_FASTPATH_H
#define RTP_FASTPATH_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

/* The JS name of each field (actors/media-session/fastpath.ts's F), exported as
   STATE_FIELD_NAMES: JS checks every index by name when it loads the addon. */
static const char *const F_NAMES[F_COUNT] = {
  [F_SSRC] = "ssrc", [F_SEQ] = "seq", [F_LAST_TS] = "lastTs", [F_TS_OFFSET] = "tsOffset",
  [F_OUT_PACKETS] = "outPackets", [F_OUT_OCTETS] = "outOctets", [F_EXPECT_SSRC] = "expectSsrc",
  [F_BASE_SEQ] = "baseSeq", [F_MAX_SEQ] = "maxSeq", [F_CYCLES] = "cycles", [F_BAD_SEQ] = "badSeq",
  [F_RECEIVED] = "received", [F_TRANSIT] = "transit", [F_JITTER] = "jitter", [F_CLOCK] = "clock",
  [F_TE_IN] = "teIn", [F_TE_OUT] = "teOut",
  [F_D_PACKETS_IN] = "dPacketsIn", [F_D_BYTES_IN] = "dBytesIn", [F_D_PACKETS_OUT] = "dPacketsOut",
  [F_D_BYTES_OUT] = "dBytesOut", [F_D_MALFORMED] = "dMalformed", [F_LAST_AT] = "lastAt",
  [F_D_RESTARTS] = "dRestarts", [F_D_FORWARDED] = "dForwarded",
  [F_IN_ROC] = "inRoc", [F_IN_HIGHEST_SEQ] = "inHighestSeq", [F_IN_WINDOW] = "inWindow",
  [F_IN_W0] = "inW0", [F_IN_W1] = "inW1", [F_IN_W2] = "inW2", [F_IN_W3] = "inW3",
  [F_OUT_ROC] = "outRoc", [F_OUT_LAST_SEQ] = "outLastSeq",
  [F_D_AUTH_FAILURES] = "dAuthFailures", [F_D_REPLAYS] = "dReplays",
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


/* Small byte helpers (network order). */
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t rd32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wr32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }

/* The packet path (packet.c), used by the N-API glue (fastpath.c). */
int canon(const struct sockaddr_storage *ss, fp_ip *ip, int *port);
int parse_addr(int family, const char *str, int port, struct sockaddr_storage *out, socklen_t *len);
fp_socket *lookup(fp_env *e, uint32_t h);
void flush(fp_env *e);
fp_out *sq_take(fp_env *e);
void set_dest(fp_out *o, const fp_socket *s, const struct sockaddr_storage *to, socklen_t to_len);
void on_readable(uv_poll_t *h, int status, int events);
void on_check(uv_check_t *h);
void on_prepare(uv_prepare_t *h);

#endif

