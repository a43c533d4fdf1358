/* hidden.c - moving hidden paths out of the rootfs and back (see hidden.h).
 *
 * Renaming is atomic and keeps everything; it fails with EXDEV when the
 * state directory is on another filesystem (the usual case: /run is a
 * tmpfs) or for overlayfs lower-layer directories.  Then the host's cp(1)
 * and rm(1) do the copy and removal, addressed through /proc/self/fd/N of a
 * directory fd resolved inside the rootfs, so no symlink in the image can
 * point them at a host path. */
#define _GNU_SOURCE
#include "hidden.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../linux/mount.h"
#include "../linux/safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <spawn.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static int
run_tool (char *const argv[], pr_error **err)
{
  pid_t pid;
  int r = posix_spawn (&pid, argv[0], NULL, NULL, argv, environ);
  if (r != 0)
    return pr_error_set (err, r, "run %s", argv[0]);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return pr_error_set (err, errno, "wait for %s", argv[0]);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return pr_error_set (err, EIO, "%s %s %s failed", argv[0], argv[1], argv[2]);
  return 0;
}

/* fd paths stay valid in the spawned tool because the fds are inherited:
 * clear close-on-exec for the duration. */
static void
set_inherit (int fd, bool on)
{
  int fl = fcntl (fd, F_GETFD);
  if (fl >= 0)
    fcntl (fd, F_SETFD, on ? (fl & ~FD_CLOEXEC) : (fl | FD_CLOEXEC));
}

static int
move_tree (int from_dir, const char *from_name, int to_dir, const char *to_name, pr_error **err)
{
  if (renameat (from_dir, from_name, to_dir, to_name) == 0)
    return 0;
  if (errno != EXDEV)
    return pr_error_set (err, errno, "move `%s`", from_name);
  char src[64], dst[64];
  snprintf (src, sizeof src, "/proc/self/fd/%d/", from_dir);
  snprintf (dst, sizeof dst, "/proc/self/fd/%d/", to_dir);
  _cleanup_free_ char *s = xasprintf ("%s%s", src, from_name);
  _cleanup_free_ char *d = xasprintf ("%s%s", dst, to_name);
  char *cp[] = { (char *) "/bin/cp", (char *) "-a", (char *) "--no-target-directory", s, d, NULL };
  char *rm[] = { (char *) "/bin/rm", (char *) "-rf", (char *) "--one-file-system", s, NULL };
  set_inherit (from_dir, true);
  set_inherit (to_dir, true);
  int r = run_tool (cp, err);
  if (r == 0)
    r = run_tool (rm, err);
  set_inherit (from_dir, false);
  set_inherit (to_dir, false);
  return r;
}

static int
remove_tree (int dir, const char *name, pr_error **err)
{
  struct stat st;
  if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : pr_error_set (err, errno, "stat `%s`", name);
  if (!S_ISDIR (st.st_mode))
    return unlinkat (dir, name, 0) == 0 ? 0 : pr_error_set (err, errno, "remove `%s`", name);
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d/", dir);
  _cleanup_free_ char *p = xasprintf ("%s%s", path, name);
  char *rm[] = { (char *) "/bin/rm", (char *) "-rf", (char *) "--one-file-system", p, NULL };
  set_inherit (dir, true);
  int r = run_tool (rm, err);
  set_inherit (dir, false);
  return r;
}

/* Opens the parent directory of path inside the root; *base_out points into
 * the caller's copy.  ENOENT for the parent means "nothing to hide". */
static int
open_parent (int rootfd, char *copy, char **base_out, int *fd_out, pr_error **err)
{
  char *slash = strrchr (copy, '/');
  *base_out = slash + 1;
  const char *parent = slash == copy ? "/" : copy;
  *slash = '\0';
  int r = pr_safe_open (rootfd, parent, O_PATH | O_DIRECTORY, 0, fd_out, err);
  *slash = '/';
  return r;
}

static int
open_stash (int state_dirfd, bool create, int *fd_out, pr_error **err)
{
  if (create && mkdirat (state_dirfd, PR_HIDDEN_DIR, 0700) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "create %s", PR_HIDDEN_DIR);
  int fd = openat (state_dirfd, PR_HIDDEN_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open %s", PR_HIDDEN_DIR);
  *fd_out = fd;
  return 0;
}

int
pr_hidden_stash (int rootfd, char *const *hide, int state_dirfd, pr_error **err)
{
  _cleanup_close_ int stash = -1;
  if (open_stash (state_dirfd, true, &stash, err) < 0)
    return -1;
  for (size_t i = 0; hide && hide[i]; i++)
    {
      _cleanup_free_ char *copy = xstrdup (hide[i]);
      _cleanup_close_ int parent = -1;
      char *base;
      pr_error *e = NULL;
      if (open_parent (rootfd, copy, &base, &parent, &e) < 0)
        {
          int enoent = e->errnum == ENOENT;
          pr_error_free (&e);
          if (enoent)
            continue;
          return pr_error_invalid (err, "hidden path `%s`: its parent is not a directory in the image", hide[i]);
        }
      struct stat st;
      if (fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          return pr_error_set (err, errno, "stat hidden path `%s`", hide[i]);
        }
      char name[32];
      snprintf (name, sizeof name, "%zu", i);
      if (move_tree (parent, base, stash, name, err) < 0)
        {
          pr_error_wrap (err, "hide `%s`", hide[i]);
          pr_hidden_restore (rootfd, hide, state_dirfd, NULL);
          return -1;
        }
      pr_debug ("rollout: moved %s out of the rootfs", hide[i]);
    }
  return 0;
}

int
pr_hidden_discard (int state_dirfd, pr_error **err)
{
  return remove_tree (state_dirfd, PR_HIDDEN_DIR, err);
}

int
pr_hidden_restore (int rootfd, char *const *hide, int state_dirfd, pr_error **err)
{
  _cleanup_close_ int stash = -1;
  pr_error *e = NULL;
  if (open_stash (state_dirfd, false, &stash, &e) < 0)
    {
      pr_error_free (&e);
      return 0;
    }
  int ret = 0;
  for (size_t i = 0; hide && hide[i]; i++)
    {
      char name[32];
      struct stat st;
      snprintf (name, sizeof name, "%zu", i);
      if (fstatat (stash, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      _cleanup_free_ char *copy = xstrdup (hide[i]);
      _cleanup_close_ int parent = -1;
      char *base;
      if (open_parent (rootfd, copy, &base, &parent, &e) < 0
          || remove_tree (parent, base, &e) < 0 || move_tree (stash, name, parent, base, &e) < 0)
        {
          pr_warn ("restore hidden path %s: %s", hide[i], e->msg);
          if (ret == 0)
            pr_error_set (err, e->errnum, "restore hidden path `%s`: %s", hide[i], e->msg);
          pr_error_free (&e);
          ret = -1;
        }
    }
  if (ret == 0)
    unlinkat (state_dirfd, PR_HIDDEN_DIR, AT_REMOVEDIR);
  return ret;
}

/* ------------------------------------------------ engine mounts at hidden paths
 *
 * The record is a sequence of entries, each three NUL-terminated fields:
 * "<flags in hex>:<r or ->", the source ("" for a tmpfs), the destination.
 * NUL cannot occur in a path, so no quoting is needed. */

#define KEPT_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* dest with "//", "." and ".." resolved lexically (as RESOLVE_IN_ROOT
 * resolves them when no symlink is on the way), so that "/./tests" or
 * "/x/../tests" is recognised as /tests.  malloc'd. */
static char *
lexical (const char *dest)
{
  char *out = xmalloc0 (strlen (dest) + 2);
  size_t n = 0;
  for (const char *p = dest; *p;)
    {
      while (*p == '/')
        p++;
      size_t len = strcspn (p, "/");
      if (len == 0 || (len == 1 && p[0] == '.'))
        ;
      else if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          while (n > 0 && out[n - 1] != '/')
            n--;
          if (n > 0)
            n--;
        }
      else
        {
          out[n++] = '/';
          memcpy (out + n, p, len);
          n += len;
        }
      p += len;
    }
  if (n == 0)
    out[n++] = '/';
  out[n] = '\0';
  return out;
}

static const char *
hidden_prefix (char *const *hide, const char *dest)
{
  _cleanup_free_ char *norm = lexical (dest);
  for (size_t i = 0; hide && hide[i]; i++)
    if (pr_path_is_under (norm, hide[i]))
      return hide[i];
  return NULL;
}

static int
describe_mount (const struct pr_mount *m, struct pr_hidden_mount *h, pr_error **err)
{
  struct pr_mount_flags f = { 0 };
  if (pr_mount_parse_options (m->options, &f, err) < 0)
    return -1;
  free (f.data);
  bool bind = f.bind || (m->type && strcmp (m->type, "bind") == 0);
  if (f.idmap || m->n_uid_mappings || m->n_gid_mappings)
    return pr_error_invalid (err, "rollout: mount at hidden path `%s`: an idmapped mount cannot be made verifier-only",
                             m->destination);
  if (!bind && !(m->type && strcmp (m->type, "tmpfs") == 0))
    return pr_error_invalid (err, "rollout: mount at hidden path `%s`: type `%s` cannot be made verifier-only",
                             m->destination, m->type ? m->type : "(none)");
  if (bind && (m->source == NULL || m->source[0] != '/'))
    return pr_error_invalid (err, "rollout: mount at hidden path `%s`: bind source must be an absolute host path",
                             m->destination);
  h->source = bind ? m->source : NULL;
  h->destination = lexical (m->destination);
  h->flags = f.flags & KEPT_FLAGS;
  h->recursive = f.recursive;
  return 0;
}

static void
append_field (char **buf, size_t *len, const char *s)
{
  size_t n = strlen (s) + 1;
  *buf = xrealloc (*buf, *len + n);
  memcpy (*buf + *len, s, n);
  *len += n;
}

int
pr_hidden_take_mounts (struct pr_config *cfg, char *const *hide, int state_dirfd, pr_error **err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, kept = 0;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      const struct pr_mount *m = &cfg->mounts[i];
      struct pr_hidden_mount h = { 0 };
      if (m->destination == NULL || hidden_prefix (hide, m->destination) == NULL)
        continue;
      if (describe_mount (m, &h, err) < 0)
        return -1;
      char head[32];
      snprintf (head, sizeof head, "%lx:%c", h.flags, h.recursive ? 'r' : '-');
      append_field (&buf, &len, head);
      append_field (&buf, &len, h.source ? h.source : "");
      append_field (&buf, &len, h.destination);
      free (h.destination);
    }
  if (len == 0)
    return 0;
  if (pr_write_file_at (state_dirfd, PR_HIDDEN_MOUNTS_FILE, buf, len, 0600, err) < 0)
    return -1;
  /* Only now, with the record safe, does the container lose them. */
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      struct pr_mount *m = &cfg->mounts[i];
      if (m->destination == NULL || hidden_prefix (hide, m->destination) == NULL)
        {
          cfg->mounts[kept++] = *m;
          continue;
        }
      pr_debug ("rollout: mount at %s is verifier-only", m->destination);
      pr_mount_free_contents (m);
    }
  cfg->n_mounts = kept;
  return 0;
}

int
pr_hidden_mounts_load (int state_dirfd, struct pr_hidden_mount **out, size_t *n, pr_error **err)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  *out = NULL;
  *n = 0;
  if (faccessat (state_dirfd, PR_HIDDEN_MOUNTS_FILE, F_OK, 0) < 0)
    return 0;
  if (pr_read_file_at (state_dirfd, PR_HIDDEN_MOUNTS_FILE, &text, &len, err) < 0)
    return -1;
  struct pr_hidden_mount *v = NULL;
  size_t count = 0, pos = 0;
  while (pos < len)
    {
      const char *f[3];
      for (int k = 0; k < 3; k++)
        {
          const char *end = memchr (text + pos, '\0', len - pos);
          if (end == NULL)
            {
              pr_hidden_mounts_free (v, count);
              return pr_error_invalid (err, "%s: damaged record", PR_HIDDEN_MOUNTS_FILE);
            }
          f[k] = text + pos;
          pos = end - text + 1;
        }
      unsigned long flags = 0;
      char rec = '-';
      if (sscanf (f[0], "%lx:%c", &flags, &rec) != 2 || f[2][0] != '/')
        {
          pr_hidden_mounts_free (v, count);
          return pr_error_invalid (err, "%s: damaged record", PR_HIDDEN_MOUNTS_FILE);
        }
      v = xrealloc (v, (count + 1) * sizeof *v);
      v[count].source = f[1][0] ? xstrdup (f[1]) : NULL;
      v[count].destination = xstrdup (f[2]);
      v[count].flags = flags & KEPT_FLAGS;
      v[count].recursive = rec == 'r';
      count++;
    }
  *out = v;
  *n = count;
  return 0;
}

void
pr_hidden_mounts_free (struct pr_hidden_mount *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].source);
      free (v[i].destination);
    }
  free (v);
}
