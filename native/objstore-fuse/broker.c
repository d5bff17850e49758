/*
 * objstore-fuse's channel to its broker (broker.h): the frames, the questions waiting for their
 * answers, and the reader thread that matches each answer to its question.
 */
#include "broker.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- frames ---- */

void put(struct buf *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->len, src, n);
  b->len += n;
}
void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* All of n bytes written (`out`) or read, through EINTR: 0, or -1 (the pipe closed or failed). */
static int all(int fd, uint8_t *p, size_t n, int out) {
  while (n) {
    ssize_t r = out ? write(fd, p, n) : read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* One frame: u32 length, then u32 n, u8 op, then the body. */
int send_frame(uint32_t n, uint8_t op, const struct buf *body) {
  uint32_t len = 5 + (uint32_t)(body ? body->len : 0);
  uint8_t head[9];
  memcpy(head, &len, 4);
  memcpy(head + 4, &n, 4);
  head[8] = op;
  pthread_mutex_lock(&out_lock);
  int r = all(1, head, 9, 1);
  if (r == 0 && body && body->len) r = all(1, body->p, body->len, 1);
  pthread_mutex_unlock(&out_lock);
  return r;
}

/* ---- questions and their answers ---- */

struct pending {
  uint32_t n;
  int done;
  int32_t code;
  uint8_t *reply; /* the answer's body (after n and code), malloc'd */
  uint32_t reply_len;
  void *window; /* a FETCH: the window it fills (NULL: a question a thread waits for) */
  struct pending *next;
};

static struct pending *pendings = NULL;
static uint32_t next_n = 1;
static int broker_gone = 0;
static fetched_fn fetched = NULL;

/* Number `p` and list it (under `lock`). */
static void add_pending(struct pending *p) {
  p->n = next_n++;
  p->next = pendings;
  pendings = p;
}

/* Take `p`, or the one numbered `n` when p is NULL, off the list (under `lock`): NULL if not there. */
static struct pending *take_pending(struct pending *p, uint32_t n) {
  for (struct pending **q = &pendings; *q; q = &(*q)->next)
    if (p ? *q == p : (*q)->n == n) {
      struct pending *found = *q;
      *q = found->next;
      return found;
    }
  return NULL;
}

int32_t broker_ask(uint8_t op, const struct buf *body, uint8_t **reply, uint32_t *reply_len) {
  struct pending p = {0};
  pthread_mutex_lock(&lock);
  if (broker_gone) {
    pthread_mutex_unlock(&lock);
    return -EIO;
  }
  add_pending(&p);
  pthread_mutex_unlock(&lock);
  if (send_frame(p.n, op, body) != 0) {
    pthread_mutex_lock(&lock);
    take_pending(&p, 0);
    pthread_mutex_unlock(&lock);
    return -EIO;
  }
  pthread_mutex_lock(&lock);
  while (!p.done) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  if (reply) *reply = p.reply, *reply_len = p.reply_len;
  else free(p.reply);
  return p.code;
}

int broker_fetch(void *window, const struct buf *body) {
  struct pending *p = calloc(1, sizeof *p);
  if (!p) return -ENOMEM;
  p->window = window;
  add_pending(p);
  if (send_frame(p->n, OP_FETCH, body) == 0) return 0;
  /* not sent: forgotten here, so the broker's going away never reports on this window */
  take_pending(p, 0);
  free(p);
  return -EIO;
}

/* The broker's answers: u32 length, u32 n, i32 code, body. */
static void *reader(void *arg) {
  (void)arg;
  for (;;) {
    uint32_t len;
    if (all(0, (uint8_t *)&len, 4, 0) != 0 || len < 8) break;
    uint8_t *frame = malloc(len);
    if (!frame || all(0, frame, len, 0) != 0) break;
    uint32_t n;
    int32_t code;
    memcpy(&n, frame, 4);
    memcpy(&code, frame + 4, 4);
    pthread_mutex_lock(&lock);
    struct pending *p = take_pending(NULL, n);
    if (p && p->window) {
      fetched(p->window, code, frame + 8, len - 8);
      free(p);
      free(frame);
    } else if (p) {
      p->code = code;
      p->reply_len = len - 8;
      p->reply = malloc(len - 8 + 1);
      memcpy(p->reply, frame + 8, len - 8);
      p->reply[len - 8] = 0;
      p->done = 1;
      free(frame);
    } else {
      free(frame);
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
  }
  /* The broker is gone: every waiter fails, and the mount goes away. */
  pthread_mutex_lock(&lock);
  broker_gone = 1;
  for (struct pending *p = pendings; p; p = p->next) {
    p->code = -EIO;
    p->done = 1;
    if (p->window) fetched(p->window, -EIO, NULL, 0);
  }
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  kill(getpid(), SIGTERM);
  return NULL;
}

int broker_start(fetched_fn on_fetched) {
  fetched = on_fetched;
  pthread_t t;
  if (pthread_create(&t, NULL, reader, NULL) != 0) return -1;
  pthread_detach(t);
  return 0;
}
