/* identity.c - resolving a rollout phase's `user` ("uid[:gid]" or names)
 * against the image's own /etc/passwd and /etc/group.  The files are read
 * by the runtime through the rootfs fd with openat2(RESOLVE_IN_ROOT), so a
 * symlinked /etc/passwd in a hostile image resolves inside the image and
 * never to the host's file; nothing from the image is executed.  Owns
 * pr_identity_resolve, pr_identity_max_ids (see identity.h). */
#define _GNU_SOURCE
#include "identity.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/util.h"
#include "safepath.h"

/* Real passwd/group files are kilobytes; the cap bounds what a hostile
 * image can make the runtime allocate. */
#define ID_FILE_MAX (4 * 1024 * 1024)

/* The largest id a process can hold: (uint32_t)-1 means "no change" to
 * setresuid(2) and chown(2), so it is never a real id. */
#define ID_MAX 4294967294U

/* An error that is not a failed system call: the message stands alone
 * (no strerror suffix) but errnum still tells callers what kind it is. */
static int id_err (pr_error **err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static int
id_err (pr_error **err, int errnum, const char *fmt, ...)
{
  if (err == NULL || *err != NULL)
    return -1;
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  /* The spec is echoed back: escape control characters so the message
   * stays one line. */
  char *clean = xmalloc (strlen (msg) * 4 + 1), *o = clean;
  for (const unsigned char *c = (const unsigned char *) msg; *c; c++)
    o += (*c < 0x20 || *c == 0x7f) ? sprintf (o, "\\x%02x", *c) : sprintf (o, "%c", *c);
  *o = '\0';
  pr_error_set (err, 0, "%s", clean);
  (*err)->errnum = errnum;
  free (clean);
  free (msg);
  return -1;
}

struct idfile
{
  char *data; /* NUL-terminated, NULL when the file is absent */
  size_t len;
};

/* Reads /etc/<name> of the image into f.  An absent file (or an /etc that
 * is not a directory) gives f->data == NULL; a non-regular file (a fifo
 * would block, a device would never end) or one over ID_FILE_MAX is an
 * error, as is any other open or read failure. */
static int
read_idfile (int rootfd, const char *path, struct idfile *f, pr_error **err)
{
  f->data = NULL;
  f->len = 0;
  _cleanup_close_ int fd = -1;
  pr_error *oerr = NULL;
  if (pr_safe_open (rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &fd, &oerr) < 0)
    {
      int e = oerr->errnum;
      if (e == ENOENT || e == ENOTDIR)
        {
          pr_error_free (&oerr);
          return 0;
        }
      if (err && *err == NULL)
        *err = oerr;
      else
        pr_error_free (&oerr);
      return -1;
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return pr_error_set (err, errno, "stat the image's `%s`", path);
  if (!S_ISREG (st.st_mode))
    return id_err (err, EINVAL, "the image's `%s` is not a regular file", path);
  if (st.st_size > ID_FILE_MAX)
    return id_err (err, EFBIG, "the image's `%s` is larger than %d bytes", path, ID_FILE_MAX);

  /* Read up to the cap plus one byte: the size may change under us. */
  size_t cap = (size_t) st.st_size + 1;
  if (cap > ID_FILE_MAX + 1)
    cap = ID_FILE_MAX + 1;
  _cleanup_free_ char *buf = xmalloc (cap + 1);
  size_t len = 0;
  for (;;)
    {
      if (len == cap)
        {
          if (cap > ID_FILE_MAX)
            return id_err (err, EFBIG, "the image's `%s` is larger than %d bytes", path, ID_FILE_MAX);
          cap = cap * 2 > ID_FILE_MAX + 1 ? ID_FILE_MAX + 1 : cap * 2;
          buf = xrealloc (buf, cap + 1);
        }
      ssize_t n = read (fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return pr_error_set (err, errno, "read the image's `%s`", path);
      if (n == 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  f->data = steal_pointer (&buf);
  f->len = len;
  return 0;
}

static void
idfile_free (struct idfile *f)
{
  free (f->data);
  f->data = NULL;
}

static void
idfile_freep (struct idfile *f)
{
  idfile_free (f);
}
#define _cleanup_idfile_ __attribute__ ((cleanup (idfile_freep)))

static int
parse_id (const char *s, size_t n, uint32_t *out)
{
  if (n == 0 || n > 10)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return -1;
      v = v * 10 + (uint64_t) (s[i] - '0');
    }
  if (v > ID_MAX)
    return -1;
  *out = (uint32_t) v;
  return 0;
}

/* One line split into colon-separated fields (pointers into a private
 * copy of the line). */
#define MAX_FIELDS 8
struct fields
{
  char *line;
  char *f[MAX_FIELDS];
  size_t n;
};

/* Iterates the lines of f: returns false at the end.  *pos is the cursor.
 * Lines that are comments, NIS compat entries ("+", "-"), contain a NUL
 * byte, or do not have exactly want fields are skipped: a malformed line
 * must neither stop the lookup nor be half-understood. */
static bool
next_entry (const struct idfile *file, size_t *pos, size_t want, struct fields *out)
{
  free (out->line);
  out->line = NULL;
  while (file->data && *pos < file->len)
    {
      const char *start = file->data + *pos;
      const char *nl = memchr (start, '\n', file->len - *pos);
      size_t n = nl ? (size_t) (nl - start) : file->len - *pos;
      *pos += n + (nl ? 1 : 0);
      if (n > 0 && start[n - 1] == '\r')
        n--;
      if (n == 0 || start[0] == '#' || start[0] == '+' || start[0] == '-' || memchr (start, '\0', n))
        continue;
      char *line = xmalloc (n + 1);
      memcpy (line, start, n);
      line[n] = '\0';
      size_t k = 0;
      char *c = line;
      out->f[k++] = c;
      while ((c = strchr (c, ':')) && k <= want)
        {
          *c++ = '\0';
          if (k < MAX_FIELDS)
            out->f[k] = c;
          k++;
        }
      if (k != want || out->f[0][0] == '\0')
        {
          free (line);
          continue;
        }
      out->line = line;
      out->n = k;
      return true;
    }
  return false;
}

static void
fields_free (struct fields *f)
{
  free (f->line);
  f->line = NULL;
}
#define _cleanup_fields_ __attribute__ ((cleanup (fields_free)))

struct pwent
{
  char *name;
  uint32_t uid, gid;
  char *home;
};

/* Finds the passwd entry for name (when name) or uid; the first match
 * wins, as with getpwnam(3).  Returns true when found. */
static bool
find_passwd (const struct idfile *pw, const char *name, uint32_t uid, struct pwent *out)
{
  _cleanup_fields_ struct fields f = { 0 };
  size_t pos = 0;
  while (next_entry (pw, &pos, 7, &f))
    {
      uint32_t u, g;
      if (parse_id (f.f[2], strlen (f.f[2]), &u) < 0 || parse_id (f.f[3], strlen (f.f[3]), &g) < 0)
        continue;
      if (name ? strcmp (f.f[0], name) != 0 : u != uid)
        continue;
      out->name = xstrdup (f.f[0]);
      out->uid = u;
      out->gid = g;
      out->home = xstrdup (f.f[5][0] ? f.f[5] : "/");
      return true;
    }
  return false;
}

static bool
find_group (const struct idfile *gr, const char *name, uint32_t *gid)
{
  _cleanup_fields_ struct fields f = { 0 };
  size_t pos = 0;
  while (next_entry (gr, &pos, 4, &f))
    {
      uint32_t g;
      if (parse_id (f.f[2], strlen (f.f[2]), &g) < 0)
        continue;
      if (strcmp (f.f[0], name) == 0)
        {
          *gid = g;
          return true;
        }
    }
  return false;
}

static bool
member_of (char *members, const char *user)
{
  for (char *save = NULL, *m = strtok_r (members, ",", &save); m; m = strtok_r (NULL, ",", &save))
    if (strcmp (m, user) == 0)
      return true;
  return false;
}

static void
collect_groups (const struct idfile *gr, const char *user, struct pr_identity *out)
{
  _cleanup_fields_ struct fields f = { 0 };
  size_t pos = 0;
  while (next_entry (gr, &pos, 4, &f))
    {
      uint32_t g;
      if (parse_id (f.f[2], strlen (f.f[2]), &g) < 0 || !member_of (f.f[3], user))
        continue;
      bool dup = false;
      for (size_t i = 0; i < out->n_groups && !dup; i++)
        dup = out->groups[i] == g;
      if (dup)
        continue;
      out->groups = xrealloc (out->groups, (out->n_groups + 1) * sizeof *out->groups);
      out->groups[out->n_groups++] = g;
    }
}

static bool
numeric (const char *s, uint32_t *out)
{
  return parse_id (s, strlen (s), out) == 0;
}

int
pr_identity_resolve (int rootfd, const char *spec, struct pr_identity *out, pr_error **err)
{
  memset (out, 0, sizeof *out);
  if (spec == NULL || *spec == '\0')
    return id_err (err, EINVAL, "empty user");
  _cleanup_free_ char *user = xstrdup (spec);
  char *group = strchr (user, ':');
  if (group)
    *group++ = '\0';
  if (*user == '\0' || (group && (*group == '\0' || strchr (group, ':'))))
    return id_err (err, EINVAL, "malformed user `%s` (expected uid[:gid] or name[:group])", spec);

  uint32_t uid = 0;
  bool uid_numeric = pr_str_is_digits (user, strlen (user));
  if (uid_numeric && !numeric (user, &uid))
    return id_err (err, EINVAL, "user `%s`: uid out of range (0-%u)", spec, ID_MAX);
  uint32_t gid = 0;
  bool gid_numeric = group && pr_str_is_digits (group, strlen (group));
  if (gid_numeric && !numeric (group, &gid))
    return id_err (err, EINVAL, "user `%s`: gid out of range (0-%u)", spec, ID_MAX);

  _cleanup_idfile_ struct idfile pw = { 0 };
  _cleanup_idfile_ struct idfile gr = { 0 };
  if (read_idfile (rootfd, "/etc/passwd", &pw, err) < 0)
    return -1;
  if (read_idfile (rootfd, "/etc/group", &gr, err) < 0)
    return -1;

  struct pwent ent = { 0 };
  bool found = find_passwd (&pw, uid_numeric ? NULL : user, uid, &ent);
  if (!found && !uid_numeric)
    {
      /* "root" is uid 0 on every Linux system, and images without a
       * passwd file (scratch, busybox-static) still run as root. */
      if (strcmp (user, "root") != 0)
        return id_err (err, EINVAL, "unknown user `%s` in the image's /etc/passwd", user);
      found = false;
      uid = 0;
    }
  if (found)
    {
      out->uid = ent.uid;
      out->gid = ent.gid;
      out->home = ent.home;
    }
  else
    {
      out->uid = uid;
      out->gid = 0;
      out->home = xstrdup ("/");
    }

  if (group && gid_numeric)
    out->gid = gid;
  else if (group)
    {
      if (!find_group (&gr, group, &gid))
        {
          if (strcmp (group, "root") != 0)
            {
              free (ent.name);
              pr_identity_free_contents (out);
              return id_err (err, EINVAL, "unknown group `%s` in the image's /etc/group", group);
            }
          gid = 0;
        }
      out->gid = gid;
    }

  /* Supplementary groups are listed by user name, so a uid without a
   * passwd entry has none. */
  const char *name = found ? ent.name : (uid_numeric ? NULL : user);
  if (name)
    collect_groups (&gr, name, out);
  free (ent.name);
  return 0;
}

int
pr_identity_max_ids (int rootfd, uint32_t *max_uid, uint32_t *max_gid, pr_error **err)
{
  _cleanup_idfile_ struct idfile pw = { 0 };
  _cleanup_idfile_ struct idfile gr = { 0 };
  if (read_idfile (rootfd, "/etc/passwd", &pw, err) < 0)
    return -1;
  if (read_idfile (rootfd, "/etc/group", &gr, err) < 0)
    return -1;
  uint32_t mu = 0, mg = 0;
  _cleanup_fields_ struct fields f = { 0 };
  size_t pos = 0;
  while (next_entry (&pw, &pos, 7, &f))
    {
      uint32_t u, g;
      if (parse_id (f.f[2], strlen (f.f[2]), &u) < 0 || parse_id (f.f[3], strlen (f.f[3]), &g) < 0)
        continue;
      mu = u > mu ? u : mu;
      mg = g > mg ? g : mg;
    }
  pos = 0;
  while (next_entry (&gr, &pos, 4, &f))
    {
      uint32_t g;
      if (parse_id (f.f[2], strlen (f.f[2]), &g) < 0)
        continue;
      mg = g > mg ? g : mg;
    }
  *max_uid = mu;
  *max_gid = mg;
  return 0;
}

void
pr_identity_free_contents (struct pr_identity *id)
{
  if (id == NULL)
    return;
  free (id->home);
  free (id->groups);
  id->home = NULL;
  id->groups = NULL;
  id->n_groups = 0;
}
