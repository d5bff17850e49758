/*
 * Attributes as the broker sends them (native-wire.ts: u32 mode, u32 nlink, u64 size, f64 mtime
 * in ms), and the hints of the last GETATTR answer: the attributes of the entries after it in its
 * container's listing (what `ls -l` asks for next), kept HINT_MS (as the kernel keeps an
 * attribute) and answered without a question.
 */
#ifndef OBJSTORE_FUSE_HINTS_H
#define OBJSTORE_FUSE_HINTS_H
#include <stdint.h>
#include <sys/stat.h>

#define ATTR_BYTES 24

/* The attr at `r` into `st`. */
void attr_of(const uint8_t *r, struct stat *st);

/* `path`'s attributes from the hints, if they hold them: 1 (st filled) or 0. Under `lock`. */
int hinted(const char *path, struct stat *st);

/* Keep the hints of `path`'s GETATTR answer (the body after its attr). Under `lock`. */
void keep_hints(const char *path, const uint8_t *body, uint32_t len);
#endif
