/*
 * Attributes and the GETATTR hints (hints.h). The hints are one answer's: a GETATTR of another
 * container replaces them.
 */
#define _GNU_SOURCE
#include "hints.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

void attr_of(const uint8_t *r, struct stat *st) {
  uint32_t mode, nlink;
  uint64_t size;
  double ms;
  memcpy(&mode, r, 4);
  memcpy(&nlink, r + 4, 4);
  memcpy(&size, r + 8, 8);
  memcpy(&ms, r + 16, 8);
  memset(st, 0, sizeof *st);
  st->st_mode = mode;
  st->st_nlink = nlink;
  st->st_size = (off_t)size;
  st->st_blksize = 4096;
  st->st_blocks = (blkcnt_t)((size + 511) / 512);
  time_t sec = (time_t)(ms / 1000);
  long nsec = (long)((ms - (double)sec * 1000) * 1e6);
  st->st_mtim.tv_sec = st->st_atim.tv_sec = st->st_ctim.tv_sec = sec;
  st->st_mtim.tv_nsec = st->st_atim.tv_nsec = st->st_ctim.tv_nsec = nsec;
}

/* How long hints are kept: as the kernel keeps an attribute (op_init's attr_timeout). */
#define HINT_MS 1000
static struct {
  char *dir; /* the container's path, with its trailing slash */
  size_t dir_len;
  uint8_t *body; /* the answer's hints: u16 name length, name, attr; repeated */
  uint32_t len;
  uint32_t next; /* where the last hit ended: ls asks in order */
  struct timespec until;
} hints;

static int hint_valid(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return hints.body && (now.tv_sec < hints.until.tv_sec || (now.tv_sec == hints.until.tv_sec && now.tv_nsec < hints.until.tv_nsec));
}

int hinted(const char *path, struct stat *st) {
  if (!hint_valid() || strncmp(path, hints.dir, hints.dir_len) != 0) return 0;
  const char *name = path + hints.dir_len;
  size_t name_len = strlen(name);
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t at = pass ? 0 : hints.next; at + 2 <= hints.len;) {
      uint16_t l;
      memcpy(&l, hints.body + at, 2);
      if (at + 2 + l + ATTR_BYTES > hints.len) break;
      if (l == name_len && memcmp(hints.body + at + 2, name, l) == 0) {
        attr_of(hints.body + at + 2 + l, st);
        hints.next = at + 2 + l + ATTR_BYTES;
        return 1;
      }
      at += 2 + l + ATTR_BYTES;
      if (pass && at >= hints.next) break;
    }
  }
  return 0;
}

void keep_hints(const char *path, const uint8_t *body, uint32_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash || len == 0) return;
  free(hints.dir);
  free(hints.body);
  hints.dir_len = (size_t)(slash - path) + 1;
  hints.dir = strndup(path, hints.dir_len);
  hints.body = malloc(len);
  if (!hints.dir || !hints.body) {
    free(hints.dir), free(hints.body);
    hints.dir = NULL, hints.body = NULL;
    return;
  }
  memcpy(hints.body, body, len);
  hints.len = len;
  hints.next = 0;
  clock_gettime(CLOCK_MONOTONIC, &hints.until);
  hints.until.tv_nsec += (HINT_MS % 1000) * 1000000L;
  hints.until.tv_sec += HINT_MS / 1000 + hints.until.tv_nsec / 1000000000L;
  hints.until.tv_nsec %= 1000000000L;
}

