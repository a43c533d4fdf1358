/* error.h - proctor's error type.
 *
 * Every fallible function returns int (0 on success, -1 on failure) and
 * fills a `pr_error **err` out-parameter with errno and a one-line message
 * that names the context ("mount /proc to rootfs/proc: Operation not
 * permitted").  Errors propagate unchanged to main(), which prints the one
 * line on stderr and/or writes it to the --log file in runc's JSON format.
 */
#ifndef PROCTOR_ERROR_H
#define PROCTOR_ERROR_H

#include <stdarg.h>

typedef struct pr_error {
  int errnum;  /* errno value, 0 when the error is not a system error */
  char *msg;   /* full message, strerror(errnum) already appended */
} pr_error;

/* Sets *err (if err and *err is NULL; the first error wins) to a new error
 * whose message is the printf-formatted text, followed by ": strerror(errnum)"
 * when errnum != 0.  Returns -1 always, so callers can `return pr_error_set(..)`.
 * Never fails (aborts on out-of-memory). */
int pr_error_set (pr_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Sets *err like pr_error_set with errnum EINVAL, for input the runtime
 * itself rejects (a malformed value, a wrong type, an impossible policy):
 * the message already says what is wrong, so ": invalid argument" is not
 * appended.  Returns -1 always. */
int pr_error_invalid (pr_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* Prefixes an existing error's message with "context: ".  Returns -1. */
int pr_error_wrap (pr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Frees an error and sets *err to NULL.  NULL-safe. */
void pr_error_free (pr_error **err);

/* cleanup attribute helper */
static inline void pr_error_cleanup (pr_error **e) { pr_error_free (e); }
#define _cleanup_error_ __attribute__ ((cleanup (pr_error_cleanup)))

#endif
