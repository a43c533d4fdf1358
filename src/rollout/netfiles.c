/* netfiles.c - the saved resolver files (see netfiles.h). */
#define _GNU_SOURCE
#include "netfiles.h"
#include "base.h"
#include "verifier.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../linux/safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Larger is not a resolver file an engine writes. */
#define MAX_NETFILE (1024 * 1024)

const char *const pr_netfiles[] = { "/etc/hosts", "/etc/resolv.conf", "/etc/hostname", NULL };

/* "rollout-etc-hosts" for "/etc/hosts"; suffix ".src" or "". */
static char *
state_name (const char *path, const char *suffix)
{
  return xasprintf ("rollout-etc-%s%s", strrchr (path, '/') + 1, suffix);
}

/* The last bind mount at path in cfg, or NULL. */
static const struct pr_mount *
engine_bind (const struct pr_config *cfg, const char *path)
{
  const struct pr_mount *found = NULL;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      const struct pr_mount *m = &cfg->mounts[i];
      bool bind = m->type && strcmp (m->type, "bind") == 0;
      for (size_t j = 0; m->options && m->options[j] && !bind; j++)
        bind = strcmp (m->options[j], "bind") == 0 || strcmp (m->options[j], "rbind") == 0;
      if (bind && m->source && m->source[0] == '/' && strcmp (m->destination, path) == 0)
        found = m;
    }
  return found;
}

static int
open_source (const char *src)
{
  return open (src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

/* The rootfs's own file (no engine bind), resolved in the root (an
 * image's symlink never leads onto the host); -1 when absent. */
static int
open_in_root (int rootfd, const char *path)
{
  int fd = -1;
  if (pr_safe_open (rootfd, path, O_RDONLY | O_NONBLOCK, 0, &fd, NULL) < 0)
    return -1;
  return fd;
}

/* The file as the container will see it, from fd (-1: none) and extra
 * (lines the runtime appends later, "" for none): *text, *len and *st (a
 * missing file with extra lines takes mode 0644 and the rootfs's owner,
 * as pr_network_write_hosts creates it).  0 when there is nothing to save. */
static int
planned_content (int fd, int rootfd, const char *extra, char **text, size_t *len, struct stat *st)
{
  if (fd < 0 || pr_read_regular (fd, MAX_NETFILE, text, len, st) < 0)
    {
      if (extra[0] == '\0' || fstat (rootfd, st) < 0)
        return 0;
      st->st_mode = S_IFREG | 0644;
      *text = xstrdup ("");
      *len = 0;
    }
  if (extra[0] != '\0')
    {
      char *joined = xasprintf ("%s%s", *text, extra);
      free (*text);
      *text = joined;
      *len = strlen (joined);
    }
  return 1;
}

static int
record_one (const struct pr_config *cfg, int rootfd, int state_dirfd, const char *path, const char *extra,
            pr_error **err)
{
  _cleanup_free_ char *copy = state_name (path, ""), *srcname = state_name (path, ".src");
  const struct pr_mount *m = engine_bind (cfg, path);
  _cleanup_close_ int fd = m ? open_source (m->source) : open_in_root (rootfd, path);
  if (m && fd < 0)
    return pr_error_set (err, errno, "rollout: read the engine's `%s` (%s)", path, m->source);
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  struct stat st;
  if (planned_content (fd, rootfd, extra, &text, &len, &st) == 0)
    return 0;
  if (pr_write_file_at (state_dirfd, copy, text, len, 0600, err) < 0)
    return -1;
  /* The verifier's copy gets the original's mode and owner. */
  if (fchownat (state_dirfd, copy, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0
      || fchmodat (state_dirfd, copy, st.st_mode & 07777, 0) < 0)
    return pr_error_set (err, errno, "rollout: keep the owner and mode of `%s`", path);
  if (m && pr_write_file_at (state_dirfd, srcname, m->source, strlen (m->source), 0600, err) < 0)
    return -1;
  return 0;
}

int
pr_netfiles_record (const struct pr_config *cfg, int rootfd, int state_dirfd, const char *hosts_extra,
                    pr_error **err)
{
  for (size_t i = 0; pr_netfiles[i]; i++)
    {
      const char *extra = strcmp (pr_netfiles[i], "/etc/hosts") == 0 && hosts_extra ? hosts_extra : "";
      if (record_one (cfg, rootfd, state_dirfd, pr_netfiles[i], extra, err) < 0)
        return -1;
    }
  return 0;
}

/* Whether path is a regular file in the live rootfs, no symlink on the way:
 * the view's walk to it (verifier.c) takes the same way. */
static bool
live_regular (const char *rootfs, const char *path)
{
  _cleanup_close_ int root = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
  _cleanup_close_ int fd = root < 0 ? -1 : (int) pr_sys_openat2 (root, path + 1, &how, sizeof how);
  struct stat st;
  return fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode);
}

int
pr_netfiles_view_add (int state_dirfd, const char *rootfs, struct pr_verifier_view *v, pr_error **err)
{
  for (size_t i = 0; pr_netfiles[i]; i++)
    {
      const char *path = pr_netfiles[i];
      if (!live_regular (rootfs, path))
        continue;
      _cleanup_free_ char *copy = state_name (path, "");
      bool saved = faccessat (state_dirfd, copy, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
      int fd = -1;
      if (pr_base_file_mount (state_dirfd, saved ? copy : NULL, path, &fd, err) < 0)
        return -1;
      pr_verifier_view_add (v, path, fd, false);
    }
  return 0;
}

const char *
pr_netfiles_change (int state_dirfd, const char *path)
{
  _cleanup_free_ char *copy = state_name (path, ""), *srcname = state_name (path, ".src");
  _cleanup_free_ char *src = NULL, *saved = NULL, *live = NULL;
  size_t saved_len = 0, live_len = 0;
  if (pr_read_file_at (state_dirfd, srcname, &src, NULL, NULL) < 0)
    return NULL;
  if (pr_read_file_at (state_dirfd, copy, &saved, &saved_len, NULL) < 0)
    return NULL;
  _cleanup_close_ int fd = open_source (src);
  struct stat st;
  if (fd < 0 || pr_read_regular (fd, MAX_NETFILE, &live, &live_len, &st) < 0)
    return "removed";
  if (live_len != saved_len || memcmp (live, saved, live_len) != 0)
    return "modified";
  return NULL;
}

bool
pr_netfiles_is_bind (int state_dirfd, const char *path)
{
  for (size_t i = 0; pr_netfiles[i]; i++)
    if (strcmp (path, pr_netfiles[i]) == 0)
      {
        _cleanup_free_ char *srcname = state_name (path, ".src");
        return faccessat (state_dirfd, srcname, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
      }
  return false;
}
