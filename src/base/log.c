/* log.c - runc-compatible text and JSON log records (see log.h).
 *
 * The logger's settings are process-wide by nature (one --log per
 * invocation), so they live in one static struct set by pr_log_init(). */
#define _GNU_SOURCE
#include "log.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

static struct
{
  int fd;
  int json;
  int debug;
} sink = { -1, 0, 0 };

int
pr_log_init (const char *path, const char *format, int debug, pr_error **err)
{
  sink.debug = debug;
  if (format == NULL || strcmp (format, "text") == 0)
    sink.json = 0;
  else if (strcmp (format, "json") == 0)
    sink.json = 1;
  else
    return pr_error_set (err, 0, "invalid log format `%s`: expected `text` or `json`", format);
  if (path == NULL || *path == '\0')
    return 0;
  int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0)
    return pr_error_set (err, errno, "open log file `%s`", path);
  sink.fd = fd;
  return 0;
}

int
pr_log_fd (void)
{
  return sink.fd;
}

static const char *level_names[] = { "debug", "info", "warning", "error" };

static void
format_time (char *buf, size_t len)
{
  struct timespec ts;
  struct tm tm;
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  size_t n = strftime (buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf + n, len - n, ".%09ldZ", ts.tv_nsec);
}

static void
write_json (int fd, const char *level, const char *msg, const char *when)
{
  yajl_gen g = yajl_gen_alloc (NULL);

  yajl_gen_map_open (g);
  yajl_gen_string (g, (const unsigned char *) "level", 5);
  yajl_gen_string (g, (const unsigned char *) level, strlen (level));
  yajl_gen_string (g, (const unsigned char *) "msg", 3);
  yajl_gen_string (g, (const unsigned char *) msg, strlen (msg));
  yajl_gen_string (g, (const unsigned char *) "time", 4);
  yajl_gen_string (g, (const unsigned char *) when, strlen (when));
  yajl_gen_map_close (g);
  _cleanup_free_ char *line = pr_json_gen_finish_line (g);
  pr_write_all (fd, line, strlen (line));
}

static void
write_record (enum pr_log_level level, const char *msg)
{
  char when[64];
  int fd = sink.fd >= 0 ? sink.fd : STDERR_FILENO;

  format_time (when, sizeof when);
  if (sink.json)
    {
      write_json (fd, level_names[level], msg, when);
      return;
    }
  _cleanup_free_ char *line = xasprintf ("time=\"%s\" level=%s msg=\"%s\"\n", when, level_names[level], msg);
  pr_write_all (fd, line, strlen (line));
}

void
pr_log (enum pr_log_level level, const char *fmt, ...)
{
  va_list ap;
  char *msg;
  int saved = errno;

  if (level == PR_LOG_DEBUG && !sink.debug)
    return;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  write_record (level, msg);
  free (msg);
  errno = saved;
}

void
pr_log_fatal_error (const pr_error *err)
{
  const char *msg = err && err->msg ? err->msg : "unknown error";
  if (sink.fd >= 0)
    write_record (PR_LOG_ERROR, msg);
  _cleanup_free_ char *line = xasprintf ("proctor: %s\n", msg);
  pr_write_all (STDERR_FILENO, line, strlen (line));
}
