/* util.c - implementations of the helpers declared in util.h. */
#define _GNU_SOURCE
#include "util.h"
#include "syscall.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/close_range.h>

void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xmalloc0 (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    abort ();
  return p;
}

char *
xstrdup (const char *s)
{
  if (s == NULL)
    return NULL;
  char *r = strdup (s);
  if (r == NULL)
    abort ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *r;
  va_start (ap, fmt);
  if (vasprintf (&r, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return r;
}

int
pr_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t r = write (fd, p, len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      p += r;
      len -= r;
    }
  return 0;
}

ssize_t
pr_read_all (int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t got = 0;
  while (got < len)
    {
      ssize_t r = read (fd, p + got, len - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return -1;
      if (r == 0)
        break;
      got += r;
    }
  return got;
}

int
pr_read_regular (int fd, size_t max, char **out, size_t *len, struct stat *st)
{
  if (fstat (fd, st) < 0)
    return -1;
  if (!S_ISREG (st->st_mode) || (unsigned long long) st->st_size > max)
    {
      errno = EINVAL;
      return -1;
    }
  char *buf = xmalloc ((size_t) st->st_size + 1);
  ssize_t n = pr_read_all (fd, buf, (size_t) st->st_size);
  if (n < 0)
    {
      free (buf);
      return -1;
    }
  buf[n] = '\0';
  *out = buf;
  *len = (size_t) n;
  return 0;
}

int
pr_read_file_at (int dirfd, const char *path, char **out, size_t *len, pr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", path);
  size_t cap = 4096, n = 0;
  _cleanup_free_ char *buf = xmalloc (cap + 1);
  for (;;)
    {
      if (n == cap)
        {
          cap *= 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return pr_error_set (err, errno, "read `%s`", path);
      if (r == 0)
        break;
      n += r;
    }
  buf[n] = '\0';
  if (len)
    *len = n;
  *out = steal_pointer (&buf);
  return 0;
}

int
pr_read_file (const char *path, char **out, size_t *len, pr_error **err)
{
  return pr_read_file_at (AT_FDCWD, path, out, len, err);
}

int
pr_write_file_at (int dirfd, const char *path, const void *data, size_t len, int mode, pr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", path);
  if (pr_write_all (fd, data, len) < 0)
    return pr_error_set (err, errno, "write `%s`", path);
  return 0;
}

int
pr_write_file (const char *path, const void *data, size_t len, pr_error **err)
{
  return pr_write_file_at (AT_FDCWD, path, data, len, 0644, err);
}

size_t
pr_strv_len (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

char **
pr_strv_dup (char *const *v)
{
  size_t n = pr_strv_len (v);
  char **r = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v[i]);
  return r;
}

void
pr_strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

void
pr_strv_freep (char ***v)
{
  pr_strv_free (*v);
}

char **
pr_strv_append (char **v, const char *s)
{
  size_t n = pr_strv_len (v);
  v = xrealloc (v, (n + 2) * sizeof (char *));
  v[n] = xstrdup (s);
  v[n + 1] = NULL;
  return v;
}

bool
pr_path_is_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  while (n > 0 && dir[n - 1] == '/')
    n--;
  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool
pr_str_is_digits (const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

int
pr_parse_u64 (const char *s, uint64_t *out)
{
  char *end;
  /* strtoull would skip blanks and accept a sign: only digits are valid. */
  if (s == NULL || *s < '0' || *s > '9')
    {
      errno = EINVAL;
      return -1;
    }
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno)
    return -1;
  if (*end != '\0')
    {
      errno = EINVAL;
      return -1;
    }
  *out = v;
  return 0;
}

int
pr_mkdir_p (const char *path, int mode)
{
  _cleanup_free_ char *p = xstrdup (path);
  for (char *s = p + 1; *s; s++)
    {
      if (*s != '/')
        continue;
      *s = '\0';
      if (mkdir (p, mode) < 0 && errno != EEXIST)
        return -1;
      *s = '/';
    }
  if (mkdir (p, mode) < 0)
    {
      struct stat st;
      if (errno != EEXIST)
        return -1;
      if (stat (p, &st) < 0)
        return -1;
      if (!S_ISDIR (st.st_mode))
        {
          errno = ENOTDIR;
          return -1;
        }
    }
  return 0;
}

void
pr_close_fds_from (int first)
{
  if (pr_sys_close_range (first, ~0U, 0) == 0)
    return;
  for (int fd = first; fd < 65536; fd++)
    close (fd);
}

static void
close_span (unsigned lo, unsigned hi)
{
  if (lo > hi)
    return;
  if (pr_sys_close_range (lo, hi, 0) == 0)
    return;
  for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
    close ((int) fd);
}

static int
cmp_int (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

void
pr_close_fds_except (const int *keep, size_t n)
{
  _cleanup_free_ int *k = xmalloc ((n + 1) * sizeof *k);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i] >= 3)
      k[m++] = keep[i];
  qsort (k, m, sizeof *k, cmp_int);
  unsigned next = 3;
  for (size_t i = 0; i < m; i++)
    {
      if ((unsigned) k[i] < next)
        continue; /* a duplicate */
      close_span (next, (unsigned) k[i] - 1);
      next = (unsigned) k[i] + 1;
    }
  close_span (next, ~0U);
}

int
pr_cloexec_fds_from (int first)
{
  if (pr_sys_close_range (first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return 0;
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return -1;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      int fd = atoi (de->d_name);
      if (fd < first || fd == dirfd (d))
        continue;
      int fl = fcntl (fd, F_GETFD);
      if (fl >= 0)
        fcntl (fd, F_SETFD, fl | FD_CLOEXEC);
    }
  closedir (d);
  return 0;
}
