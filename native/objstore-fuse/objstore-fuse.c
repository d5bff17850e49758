/*
 * objstore-fuse: the read-only mount's file system on libfuse 3, serving reads without JavaScript.
 *
 * Started by actors/objstore-mount/fuse-process.ts (the broker) as
 *   objstore-fuse <mountpoint> <windows file> <window bytes> <ahead windows>
 * with its stdin and stdout as pipes to the broker. The namespace (getattr, readdir, open) is
 * asked of the broker in frames (actors/objstore-mount/native-wire.ts: one home for the format),
 * which answers with the same rules as the fuse-native mount (ops.ts). The bytes: a file is read
 * in windows of <window bytes>, each fetched once (a FETCH frame; the store writes the window's
 * verified bytes into a slot of the windows file) and then every kernel request in it is answered
 * here by one pread from the slot, on libfuse's own threads. A sequential reader has the next
 * <ahead> windows fetched while it reads one; windows more than one behind it are dropped and
 * their slots given back (RELEASE) once no request copies from them. libfuse 3 negotiates kernel
 * requests of up to 1 MiB (max_pages) where libfuse 2 had 128 KiB.
 *
 * Every operation that would write answers EROFS. SIGTERM or SIGINT: unmount and exit 0. The
 * broker gone (stdin at EOF): the same, so a killed daemon does not leave this process serving.
 *
 * Here: the operations and the windows. The channel to the broker is broker.c's; attributes and
 * the hints of `ls -l` are hints.c's.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker.h"
#include "hints.h"

static int windows_fd = -1;
static uint64_t WINDOW = 16u << 20;
static int AHEAD = 2;

/* ---- windows (under `lock`) ---- */

struct window {
  uint64_t start;
  int state; /* 0 fetching, 1 ready, 2 failed (bytes: the negative errno) */
  uint64_t slot;
  uint32_t bytes;
  int users;   /* requests copying from it now */
  int dropped; /* no longer in its file's list: give its slot back once unused */
  struct window *next;
};

struct file {
  char *id;
  uint64_t size;
  uint64_t last_end;
  struct window *windows;
};

static void release_slot(struct window *w) {
  if (w->state == 1) {
    struct buf b = {0};
    put_u64(&b, w->slot);
    send_frame(0, OP_RELEASE, &b);
    free(b.p);
  }
  free(w);
}

/* A FETCH for window `w` of `f` (under `lock`; the answer comes to `fetched`). */
static int fetch(struct file *f, struct window *w, int ahead) {
  struct buf b = {0};
  uint64_t len = f->size - w->start < WINDOW ? f->size - w->start : WINDOW;
  put_u64(&b, w->start);
  put_u32(&b, (uint32_t)len);
  uint8_t a = (uint8_t)ahead;
  put(&b, &a, 1);
  put(&b, f->id, strlen(f->id));
  int r = broker_fetch(w, &b);
  free(b.p);
  return r;
}

/* A FETCH's answer (broker.c's reader, under `lock`): its body is u64 slot, u32 bytes. */
static void fetched(void *window, int32_t code, const uint8_t *body, uint32_t len) {
  struct window *w = window;
  if (code == 0 && len >= 12) {
    memcpy(&w->slot, body, 8);
    memcpy(&w->bytes, body + 8, 4);
    w->state = 1;
    if (w->dropped) release_slot(w);
  } else {
    /* failed or declined: the window is forgotten (a reader waiting for it sees the code) */
    w->state = 2;
    w->bytes = (uint32_t)(code == 0 ? -EIO : code);
    if (w->dropped) free(w);
  }
}

/* ---- operations ---- */

static int of_path(uint8_t op, const char *path, uint32_t flags, int with_flags, uint8_t **reply, uint32_t *len) {
  struct buf b = {0};
  if (with_flags) put_u32(&b, flags);
  put(&b, path, strlen(path));
  int32_t code = broker_ask(op, &b, reply, len);
  free(b.p);
  return code;
}

/* GETATTR's answer: the attr, then hints (keep_hints). */
static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  (void)fi;
  pthread_mutex_lock(&lock);
  int hit = hinted(path, st);
  pthread_mutex_unlock(&lock);
  if (hit) return 0;
  uint8_t *r = NULL;
  uint32_t len = 0;
  int32_t code = of_path(OP_GETATTR, path, 0, 0, &r, &len);
  if (code == 0 && len >= ATTR_BYTES) {
    attr_of(r, st);
    pthread_mutex_lock(&lock);
    keep_hints(path, r + ATTR_BYTES, len - ATTR_BYTES);
    pthread_mutex_unlock(&lock);
  } else if (code == 0) {
    code = -EIO;
  }
  free(r);
  return code;
}

/* READDIR's answer: the names, each ended by a NUL. */
static int op_readdir(const char *path, void *out, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
  (void)off, (void)fi, (void)flags;
  uint8_t *r = NULL;
  uint32_t len = 0;
  int32_t code = of_path(OP_READDIR, path, 0, 0, &r, &len);
  if (code == 0) {
    fill(out, ".", NULL, 0, 0);
    fill(out, "..", NULL, 0, 0);
    for (uint32_t at = 0; at < len;) {
      const char *name = (const char *)r + at;
      size_t l = strnlen(name, len - at);
      if (l) fill(out, name, NULL, 0, 0);
      at += (uint32_t)l + 1;
    }
  }
  free(r);
  return code;
}

/* OPEN's answer: u64 size, then the object id. */
static int op_open(const char *path, struct fuse_file_info *fi) {
  uint8_t *r = NULL;
  uint32_t len = 0;
  int32_t code = of_path(OP_OPEN, path, (uint32_t)fi->flags, 1, &r, &len);
  if (code == 0 && len > 8) {
    struct file *f = calloc(1, sizeof *f);
    if (!f) {
      free(r);
      return -ENOMEM;
    }
    memcpy(&f->size, r, 8);
    f->id = strndup((const char *)r + 8, len - 8);
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->keep_cache = 0;
  } else if (code == 0) {
    code = -EIO;
  }
  free(r);
  return code;
}

static uint64_t align(uint64_t off) { return off / WINDOW * WINDOW; }

static struct window *held(struct file *f, uint64_t start) {
  for (struct window *w = f->windows; w; w = w->next)
    if (w->start == start) return w;
  return NULL;
}

/* Take window `w` out of `f`'s list; its slot goes back now, or when the fetch or the last copy ends. */
static void drop(struct file *f, struct window *w) {
  for (struct window **q = &f->windows; *q; q = &(*q)->next)
    if (*q == w) {
      *q = w->next;
      break;
    }
  w->dropped = 1;
  if (w->state == 1 && w->users == 0) release_slot(w);
  else if (w->state == 2) free(w);
}

/* The window at `start`, fetched if not held (under `lock`); NULL if a fetch ahead could not be sent. */
static struct window *get(struct file *f, uint64_t start, int ahead) {
  struct window *w = held(f, start);
  if (w) return w;
  w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->start = start;
  w->next = f->windows;
  f->windows = w;
  if (fetch(f, w, ahead) != 0) {
    w->state = 2;
    w->bytes = (uint32_t)-EIO;
  }
  return w;
}

/* A reader at [pos, end): fetch ahead of a sequential one, drop what is behind it (but one) or far ahead (read-ahead.ts's rule). */
static void advance(struct file *f, uint64_t pos, uint64_t end) {
  uint64_t d = pos > f->last_end ? pos - f->last_end : f->last_end - pos;
  int sequential = d <= WINDOW;
  f->last_end = end;
  uint64_t last = align(end - 1);
  if (sequential)
    for (int i = 1; i <= AHEAD; i++)
      if (last + (uint64_t)i * WINDOW < f->size) get(f, last + (uint64_t)i * WINDOW, 1);
  uint64_t lo = align(pos) >= WINDOW ? align(pos) - WINDOW : 0;
  for (struct window *w = f->windows, *next; w; w = next) {
    next = w->next;
    if (w->start < lo || w->start > last + (uint64_t)AHEAD * WINDOW) drop(f, w);
  }
}

static int op_read(const char *path, char *into, size_t len, off_t off, struct fuse_file_info *fi) {
  (void)path;
  struct file *f = (struct file *)(uintptr_t)fi->fh;
  if (!f) return -EBADF;
  uint64_t pos = (uint64_t)off;
  if (pos >= f->size || len == 0) return 0;
  uint64_t end = pos + len < f->size ? pos + len : f->size;
  struct window *use[4];
  int nuse = 0;
  pthread_mutex_lock(&lock);
  advance(f, pos, end);
  for (;;) {
    int waiting = 0, retry = 0, code = 0;
    nuse = 0;
    for (uint64_t w = align(pos); w < end && nuse < 4; w += WINDOW) {
      struct window *win = get(f, w, 0);
      if (!win) {
        code = -ENOMEM;
        break;
      }
      if (win->state == 0) waiting = 1;
      else if (win->state == 2) {
        code = (int32_t)win->bytes;
        drop(f, win); /* forgotten: the next read of it tries again */
        /* a fetch ahead declined (the read-ahead budget): fetched now, for this reader */
        if (code == -EAGAIN) code = 0, retry = 1;
        break;
      }
      use[nuse++] = win;
    }
    if (code) {
      pthread_mutex_unlock(&lock);
      return code;
    }
    if (retry) continue;
    if (!waiting) break;
    pthread_cond_wait(&changed, &lock);
  }
  for (int i = 0; i < nuse; i++) use[i]->users++;
  pthread_mutex_unlock(&lock);

  int code = 0;
  size_t done = 0;
  for (int i = 0; i < nuse && !code; i++) {
    struct window *w = use[i];
    uint64_t from = (pos + done) - w->start;
    uint64_t to = end - w->start < w->bytes ? end - w->start : w->bytes;
    if (to <= from) {
      code = -EIO; /* a short window: the object is shorter than its record says */
      break;
    }
    ssize_t r = pread(windows_fd, into + done, to - from, (off_t)(w->slot + from));
    if (r != (ssize_t)(to - from)) code = -EIO;
    else done += (size_t)r;
  }
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nuse; i++)
    if (--use[i]->users == 0 && use[i]->dropped) release_slot(use[i]);
  pthread_mutex_unlock(&lock);
  return code ? code : (int)done;
}

static int op_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  struct file *f = (struct file *)(uintptr_t)fi->fh;
  if (!f) return 0;
  pthread_mutex_lock(&lock);
  while (f->windows) drop(f, f->windows);
  pthread_mutex_unlock(&lock);
  free(f->id);
  free(f);
  return 0;
}

static int erofs_path(const char *a) { (void)a; return -EROFS; }
static int erofs_2(const char *a, const char *b) { (void)a, (void)b; return -EROFS; }
static int erofs_rename(const char *a, const char *b, unsigned int f) { (void)a, (void)b, (void)f; return -EROFS; }
static int erofs_mode(const char *a, mode_t m) { (void)a, (void)m; return -EROFS; }
static int erofs_chmod(const char *a, mode_t m, struct fuse_file_info *fi) { (void)a, (void)m, (void)fi; return -EROFS; }
static int erofs_chown(const char *a, uid_t u, gid_t g, struct fuse_file_info *fi) { (void)a, (void)u, (void)g, (void)fi; return -EROFS; }
static int erofs_truncate(const char *a, off_t o, struct fuse_file_info *fi) { (void)a, (void)o, (void)fi; return -EROFS; }
static int erofs_write(const char *a, const char *b, size_t s, off_t o, struct fuse_file_info *fi) { (void)a, (void)b, (void)s, (void)o, (void)fi; return -EROFS; }
static int erofs_create(const char *a, mode_t m, struct fuse_file_info *fi) { (void)a, (void)m, (void)fi; return -EROFS; }
static int erofs_mknod(const char *a, mode_t m, dev_t d) { (void)a, (void)m, (void)d; return -EROFS; }
static int erofs_utimens(const char *a, const struct timespec t[2], struct fuse_file_info *fi) { (void)a, (void)t, (void)fi; return -EROFS; }
static int erofs_setxattr(const char *a, const char *n, const char *v, size_t s, int f) { (void)a, (void)n, (void)v, (void)s, (void)f; return -EROFS; }
static int erofs_removexattr(const char *a, const char *n) { (void)a, (void)n; return -EROFS; }
static int erofs_fallocate(const char *a, int m, off_t o, off_t l, struct fuse_file_info *fi) { (void)a, (void)m, (void)o, (void)l, (void)fi; return -EROFS; }

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  /* No readdirplus: readdir answers names only (a plain `ls` of 100 000 entries asks nothing
     more), where libfuse's readdirplus would look up every entry (measured: ls -1 0.6 s -> 3.9 s). */
  conn->want &= ~(unsigned)(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
  /* A path may be deleted and stored again as another object: attributes are kept 1 s only (as the fuse-native mount). */
  cfg->attr_timeout = 1;
  cfg->entry_timeout = 1;
  cfg->negative_timeout = 0;
  cfg->kernel_cache = 0;
  cfg->use_ino = 0;
  return NULL;
}

static const struct fuse_operations ops = {
    .init = op_init,
    .getattr = op_getattr,
    .readdir = op_readdir,
    .open = op_open,
    .read = op_read,
    .release = op_release,
    .write = erofs_write,
    .create = erofs_create,
    .mkdir = erofs_mode,
    .unlink = erofs_path,
    .rmdir = erofs_path,
    .rename = erofs_rename,
    .truncate = erofs_truncate,
    .chmod = erofs_chmod,
    .chown = erofs_chown,
    .utimens = erofs_utimens,
    .symlink = erofs_2,
    .link = erofs_2,
    .setxattr = erofs_setxattr,
    .removexattr = erofs_removexattr,
    .mknod = erofs_mknod,
    .fallocate = erofs_fallocate,
};

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: objstore-fuse <mountpoint> <windows file> <window bytes> <ahead windows>\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  windows_fd = open(argv[2], O_RDONLY | O_CLOEXEC);
  if (windows_fd < 0) {
    fprintf(stderr, "objstore-fuse: windows file %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  WINDOW = strtoull(argv[3], NULL, 10);
  AHEAD = atoi(argv[4]);
  if (WINDOW == 0 || WINDOW > (1u << 30) || AHEAD < 0 || AHEAD > 16) {
    fprintf(stderr, "objstore-fuse: bad window %s or ahead %s\n", argv[3], argv[4]);
    return 2;
  }
  char *fargv[] = {argv[0], "-o", "allow_other,default_permissions,fsname=objstore,subtype=objstore", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
  struct fuse *fuse = fuse_new(&args, &ops, sizeof ops, NULL);
  if (!fuse) return 1;
  if (fuse_mount(fuse, argv[1]) != 0) {
    fprintf(stderr, "objstore-fuse: cannot mount %s\n", argv[1]);
    fuse_destroy(fuse);
    return 1;
  }
  struct fuse_session *se = fuse_get_session(fuse);
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    return 1;
  }
  if (broker_start(fetched) != 0) {
    fuse_remove_signal_handlers(se);
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    return 1;
  }
  send_frame(0, OP_MOUNTED, NULL);
  int r = fuse_loop_mt(fuse, 0);
  fuse_remove_signal_handlers(se);
  fuse_unmount(fuse);
  fuse_destroy(fuse);
  return r == 0 ? 0 : 1;
}
