/* devices_hostfs.c - the private tmpfs that holds a user-namespaced
 * container's device nodes, made to read in mountinfo like the host's
 * /dev filesystem that crun's binds of the host's nodes show (devices.h
 * pr_devices_open).
 *
 * Why: crun, the runtime users compare with, bind-mounts the host's nodes
 * into a container with a user namespace, so its mountinfo reads
 * "/null /dev/null rw,nosuid,noexec,relatime - devtmpfs devtmpfs
 * rw,size=...,nr_inodes=...,mode=755".  Where that inode would be the
 * container's to chmod (its owner is mapped: a rollout's identity map),
 * proctor makes its own node instead; this file gives the tmpfs holding
 * it the source and the super options of the filesystem holding the
 * host's /dev/null, read from /proc/self/mountinfo (proc(5)).  The one
 * field the kernel lets no one choose is the filesystem type (tmpfs, not
 * devtmpfs). */
#define _GNU_SOURCE
#include "devices-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "mount-internal.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* The node whose filesystem is copied. */
#define HOST_NODE "/dev/null"

/* True when mount point mp (unescaped) holds path: "/", an equal path, or
 * a parent of it. */
static bool
holds (const char *mp, const char *path)
{
  size_t n = strlen (mp);
  if (strcmp (mp, "/") == 0)
    return true;
  return strncmp (mp, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Of the mountinfo line (modified in place), the mount point, fstype,
 * source and super options; -1 for a line without the " - " separator. */
static int
split_line (char *line, char **mp, char **fstype, char **source, char **superopts)
{
  char *sep = strstr (line, " - ");
  if (sep == NULL)
    return -1;
  *sep = '\0';
  char *save = NULL, *f = strtok_r (line, " ", &save);
  for (int i = 0; f && i < 4; i++)
    f = strtok_r (NULL, " ", &save);
  if (f == NULL)
    return -1;
  *mp = f;
  save = NULL;
  *fstype = strtok_r (sep + 3, " \n", &save);
  *source = strtok_r (NULL, " \n", &save);
  *superopts = strtok_r (NULL, " \n", &save);
  if (*fstype == NULL || *source == NULL || *superopts == NULL)
    return -1;
  unescape_mountinfo (*mp);
  unescape_mountinfo (*source);
  return 0;
}

/* Fills *out from the mount that holds HOST_NODE in our mountinfo: the
 * deepest mount point, the last of equals (it covers the others).
 * Returns -1 when none is found or the file cannot be read (the caller
 * then makes a plain tmpfs). */
static int
host_dev_fs (struct pr_host_dev_fs *out)
{
  memset (out, 0, sizeof *out);
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return -1;
  _cleanup_free_ char *line = NULL;
  size_t cap = 0, best = 0;
  bool found = false;
  while (getline (&line, &cap, f) >= 0)
    {
      char *mp, *fstype, *source, *superopts;
      if (split_line (line, &mp, &fstype, &source, &superopts) < 0 || !holds (mp, HOST_NODE))
        continue;
      size_t n = strlen (mp);
      if (found && n < best)
        continue;
      best = n;
      found = true;
      snprintf (out->fstype, sizeof out->fstype, "%s", fstype);
      snprintf (out->source, sizeof out->source, "%s", source);
      snprintf (out->superopts, sizeof out->superopts, "%s", superopts);
    }
  return found ? 0 : -1;
}

/* Passes each "key=value" of the super options, and each flag but rw and
 * ro (those are the mount's, not the filesystem's), to the tmpfs
 * context fs. */
static int
copy_superopts (int fs, const char *superopts)
{
  _cleanup_free_ char *copy = xstrdup (superopts);
  char *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      char *eq = strchr (t, '=');
      if (eq == NULL)
        {
          if (strcmp (t, "rw") != 0 && strcmp (t, "ro") != 0
              && pr_sys_fsconfig (fs, FSCONFIG_SET_FLAG, t, NULL, 0) < 0)
            return -1;
          continue;
        }
      *eq = '\0';
      if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, t, eq + 1, 0) < 0)
        return -1;
    }
  return 0;
}

/* How much of the host's /dev filesystem a tmpfs copies. */
enum copy_level
{
  COPY_NOTHING,
  COPY_SOURCE,  /* the source only */
  COPY_OPTIONS, /* the source and the super options */
};

/* One fsopen'ed tmpfs context with what level says of h on it, created.
 * Returns the context fd, or -1 with errno. */
static int
create_tmpfs (const struct pr_host_dev_fs *h, enum copy_level level)
{
  _cleanup_close_ int fs = pr_sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return -1;
  if (level >= COPY_SOURCE && pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "source", h->source, 0) < 0)
    return -1;
  if (level >= COPY_OPTIONS && copy_superopts (fs, h->superopts) < 0)
    return -1;
  if (pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return steal_fd (&fs);
}

int
pr_devices_private_tmpfs (int *mnt_out, pr_error **err)
{
  struct pr_host_dev_fs h;
  /* Only a tmpfs-like host filesystem has options a tmpfs takes; an
   * option the kernel refuses (an LSM's "seclabel") leaves the source. */
  enum copy_level level = COPY_NOTHING;
  if (host_dev_fs (&h) == 0)
    level = strcmp (h.fstype, "devtmpfs") == 0 || strcmp (h.fstype, "tmpfs") == 0 ? COPY_OPTIONS : COPY_SOURCE;
  _cleanup_close_ int fs = create_tmpfs (&h, level);
  while (fs < 0 && level > COPY_NOTHING)
    {
      pr_debug ("tmpfs for the devices like the host's /dev (`%s` `%s`) refused (%s); less of it", h.source,
                h.superopts, strerror (errno));
      level--;
      fs = create_tmpfs (&h, level);
    }
  if (fs < 0)
    return pr_error_set (err, errno, "create tmpfs for the container's devices");
  *mnt_out = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  if (*mnt_out < 0)
    return pr_error_set (err, errno, "fsmount tmpfs for the container's devices");
  return 0;
}
