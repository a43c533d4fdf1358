/* log.h - the --log / --log-format / --debug sink.
 *
 * Implements runc's log contract, which containerd's runc shim parses: with
 * --log-format json each record is one line
 *   {"level":"error","msg":"...","time":"2026-01-02T15:04:05Z"}
 * and with text format:  time="..." level=error msg="..."
 * Without --log, records go to stderr.  The final error of a command is also
 * printed on stderr as one line "proctor: MSG" (runc prints its fatal error
 * there too; podman shows stderr to the user). */
#ifndef PROCTOR_LOG_H
#define PROCTOR_LOG_H

#include "error.h"

enum pr_log_level { PR_LOG_DEBUG, PR_LOG_INFO, PR_LOG_WARNING, PR_LOG_ERROR };

/* Configures the sink.  path may be NULL (stderr); format is "text" or
 * "json" (NULL = text).  debug enables PR_LOG_DEBUG records.  Errors: the
 * log file cannot be opened (errno), an unknown format (EINVAL). */
int pr_log_init (const char *path, const char *format, int debug, pr_error **err);

/* The log file descriptor (-1 when logging to stderr), so a forked child
 * keeps logging to the same file. */
int pr_log_fd (void);

/* Writes one record at level. */
void pr_log (enum pr_log_level level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#define pr_debug(...) pr_log (PR_LOG_DEBUG, __VA_ARGS__)
#define pr_warn(...) pr_log (PR_LOG_WARNING, __VA_ARGS__)

/* Reports a command's final error: an error record in the log and the
 * one line on stderr. */
void pr_log_fatal_error (const pr_error *err);

#endif
