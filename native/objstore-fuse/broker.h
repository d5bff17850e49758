/*
 * objstore-fuse's channel to its broker (actors/objstore-mount/fuse-process.ts): frames on
 * stdout, answers on stdin (actors/objstore-mount/native-wire.ts holds the format). A question
 * is asked and waited for (`broker_ask`), or sent for a window (`broker_fetch`), whose answer the
 * reader thread hands to the callback given to `broker_start`.
 */
#ifndef OBJSTORE_FUSE_BROKER_H
#define OBJSTORE_FUSE_BROKER_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Frame ops (native-wire.ts). */
enum { OP_MOUNTED = 0, OP_GETATTR = 1, OP_READDIR = 2, OP_OPEN = 3, OP_FETCH = 4, OP_RELEASE = 5 };

/* Guards the pending questions and everything the fetch callback touches (the files' windows). */
extern pthread_mutex_t lock;
/* Broadcast under `lock` whenever an answer arrived (or the broker went away). */
extern pthread_cond_t changed;

/* A growing frame body. */
struct buf {
  uint8_t *p;
  size_t len, cap;
};
void put(struct buf *b, const void *src, size_t n);
void put_u32(struct buf *b, uint32_t v);
void put_u64(struct buf *b, uint64_t v);

/* Send one frame (any thread): 0, or -1 when the broker is gone. */
int send_frame(uint32_t n, uint8_t op, const struct buf *body);

/*
 * Ask the broker and wait (not under `lock`): the answer's code (0 or a negative errno); its body
 * (NUL-terminated, malloc'd) in *reply when reply is not NULL.
 */
int32_t broker_ask(uint8_t op, const struct buf *body, uint8_t **reply, uint32_t *reply_len);

/*
 * A FETCH frame for `window` (under `lock`): 0, or -EIO/-ENOMEM if it could not be sent. Its
 * answer comes to the callback, under `lock`.
 */
int broker_fetch(void *window, const struct buf *body);

/*
 * Called under `lock` with a FETCH's answer: its code, and its body (after n and code) when the
 * code is 0; with -EIO and no body for every FETCH still out when the broker goes away.
 */
typedef void (*fetched_fn)(void *window, int32_t code, const uint8_t *body, uint32_t len);

/* Start the reader thread. When the broker goes (stdin at EOF), every waiter fails and the process gets SIGTERM. */
int broker_start(fetched_fn on_fetched);
#endif
