/* util.h - small helpers shared by every module: cleanup attributes for
 * fds, mallocs, FILEs and JSON trees, allocation that aborts on OOM, whole
 * file reads/writes, and NULL-terminated string vectors. */
#ifndef PROCTOR_UTIL_H
#define PROCTOR_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define PR_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

static inline void pr_freep (void *p) { free (*(void **) p); }
static inline void pr_closep (int *fd) { if (*fd >= 0) close (*fd); }
static inline void pr_fclosep (FILE **f) { if (*f) fclose (*f); }
void pr_strv_freep (char ***v);

#define _cleanup_free_ __attribute__ ((cleanup (pr_freep)))
#define _cleanup_close_ __attribute__ ((cleanup (pr_closep)))
#define _cleanup_fclose_ __attribute__ ((cleanup (pr_fclosep)))
#define _cleanup_strv_ __attribute__ ((cleanup (pr_strv_freep)))

/* Returns the value of *p and sets *p to its "empty" value, to hand an
 * owned resource out of a cleanup-guarded variable. */
#define steal_pointer(p) ({ __typeof__ (*(p)) _t = *(p); *(p) = NULL; _t; })
#define steal_fd(p) ({ int _t = *(p); *(p) = -1; _t; })

/* Allocation wrappers: abort() on out-of-memory, never return NULL
 * (except xstrdup(NULL) which returns NULL). */
void *xmalloc (size_t n);
void *xmalloc0 (size_t n);
void *xrealloc (void *p, size_t n);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Reads a whole file into a NUL-terminated malloc'd buffer; *len (may be
 * NULL) receives the byte count.  dirfd/path as openat(2).  Errors: any
 * open/read errno, with the path in the message. */
int pr_read_file_at (int dirfd, const char *path, char **out, size_t *len, pr_error **err);

/* Reads fd, which must be a regular file of at most max bytes, into a
 * NUL-terminated malloc'd *out (*len bytes); *st gets its fstat.  For
 * files a container controls: a fifo or device is never read, a huge
 * file never allocated.  Returns 0, or -1 with errno: fstat's or read's,
 * EINVAL when it is not a regular file or is larger than max. */
int pr_read_regular (int fd, size_t max, char **out, size_t *len, struct stat *st);
int pr_read_file (const char *path, char **out, size_t *len, pr_error **err);

/* Writes len bytes to path (O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, mode), as
 * openat(2) relative to dirfd.  Errors: open/write errno with the path. */
int pr_write_file_at (int dirfd, const char *path, const void *data, size_t len, int mode, pr_error **err);
int pr_write_file (const char *path, const void *data, size_t len, pr_error **err);

/* Writes all of buf to fd, retrying on EINTR and short writes.  Returns
 * 0 or -1 with errno set. */
int pr_write_all (int fd, const void *buf, size_t len);
/* Reads exactly len bytes unless EOF; returns bytes read or -1 (errno). */
ssize_t pr_read_all (int fd, void *buf, size_t len);

/* NULL-terminated string vectors. */
size_t pr_strv_len (char *const *v);
char **pr_strv_dup (char *const *v);
void pr_strv_free (char **v);
/* Appends a copy of s, returns the new vector (old pointer is invalid). */
char **pr_strv_append (char **v, const char *s);

/* True when the first n bytes of s are all ASCII digits and n > 0 (pass
 * strlen (s) for a whole string). */
bool pr_str_is_digits (const char *s, size_t n);

/* True when path is dir or lies below it, comparing whole components as
 * text: "/a/b" and "/a" are under "/a", "/ab" is not.  Trailing '/'s of
 * dir are ignored, so "/" holds every absolute path.  Neither path is
 * resolved ("..", symlinks): callers pass normalised absolute paths
 * (realpath(3), mountinfo fields, a policy's normalised paths). */
bool pr_path_is_under (const char *path, const char *dir);

/* Parses a decimal unsigned integer; -1 with errno=EINVAL/ERANGE. */
int pr_parse_u64 (const char *s, uint64_t *out);

/* mkdir -p with mode; EEXIST on components is fine. 0 or -1 with errno. */
int pr_mkdir_p (const char *path, int mode);

/* Closes every fd >= first, using close_range(2) where possible.  Used so
 * no host fd reaches the container (CVE-2024-21626 class). */
void pr_close_fds_from (int first);

/* Closes every fd >= 3 but the n in keep (any order; negative entries
 * ignored), with close_range(2) over the gaps where possible: a process
 * forked to live on (the egress helper) keeps only what it was given,
 * none of its parent's (engine pipes, sockets whose peer waits for EOF).
 * Source: close_range(2). */
void pr_close_fds_except (const int *keep, size_t n);

/* Marks every fd >= first as O_CLOEXEC. */
int pr_cloexec_fds_from (int first);

#endif
