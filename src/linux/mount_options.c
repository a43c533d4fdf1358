/* mount_options.c - config.json mount options (runtime-spec config.md
 * "Mounts", mount(8), mount_setattr(2)): the option table, parsing into
 * struct pr_mount_flags (MS_* flags, recursive attributes, propagation,
 * bind, idmap, filesystem data) and the propagation names
 * rootfsPropagation uses.  Pure: no system calls. */
#define _GNU_SOURCE
#include "mount.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>

#include "mount-internal.h"
#include "../base/util.h"

/* ---- option parsing ------------------------------------------------- */

enum opt_kind { OPT_FLAG, OPT_CLEAR, OPT_RFLAG, OPT_RCLEAR, OPT_PROP, OPT_BIND, OPT_RBIND, OPT_IDMAP, OPT_IGNORE };

struct mount_opt
{
  const char *name;
  enum opt_kind kind;
  unsigned long flag;
};

/* mount(8) FILESYSTEM-INDEPENDENT MOUNT OPTIONS, as runc and crun accept
 * them.  "tmpcopyup" is proctor's to handle (it is refused in mount.c) and
 * never reaches the filesystem. */
static const struct mount_opt mount_opts[] = {
  { "defaults", OPT_IGNORE, 0 },
  { "ro", OPT_FLAG, MS_RDONLY },
  { "rw", OPT_CLEAR, MS_RDONLY },
  { "nosuid", OPT_FLAG, MS_NOSUID },
  { "suid", OPT_CLEAR, MS_NOSUID },
  { "nodev", OPT_FLAG, MS_NODEV },
  { "dev", OPT_CLEAR, MS_NODEV },
  { "noexec", OPT_FLAG, MS_NOEXEC },
  { "exec", OPT_CLEAR, MS_NOEXEC },
  { "sync", OPT_FLAG, MS_SYNCHRONOUS },
  { "async", OPT_CLEAR, MS_SYNCHRONOUS },
  { "remount", OPT_FLAG, MS_REMOUNT },
  { "mand", OPT_FLAG, MS_MANDLOCK },
  { "nomand", OPT_CLEAR, MS_MANDLOCK },
  { "dirsync", OPT_FLAG, MS_DIRSYNC },
  { "noatime", OPT_FLAG, MS_NOATIME },
  { "atime", OPT_CLEAR, MS_NOATIME },
  { "nodiratime", OPT_FLAG, MS_NODIRATIME },
  { "diratime", OPT_CLEAR, MS_NODIRATIME },
  { "relatime", OPT_FLAG, MS_RELATIME },
  { "norelatime", OPT_CLEAR, MS_RELATIME },
  { "strictatime", OPT_FLAG, MS_STRICTATIME },
  { "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
  { "nosymfollow", OPT_FLAG, MS_NOSYMFOLLOW },
  { "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW },
  { "silent", OPT_FLAG, MS_SILENT },
  { "loud", OPT_CLEAR, MS_SILENT },
  { "iversion", OPT_FLAG, MS_I_VERSION },
  { "noiversion", OPT_CLEAR, MS_I_VERSION },
  { "lazytime", OPT_FLAG, MS_LAZYTIME },
  { "nolazytime", OPT_CLEAR, MS_LAZYTIME },
  { "bind", OPT_BIND, MS_BIND },
  { "rbind", OPT_RBIND, MS_BIND | MS_REC },
  { "private", OPT_PROP, MS_PRIVATE },
  { "rprivate", OPT_PROP, MS_PRIVATE | MS_REC },
  { "shared", OPT_PROP, MS_SHARED },
  { "rshared", OPT_PROP, MS_SHARED | MS_REC },
  { "slave", OPT_PROP, MS_SLAVE },
  { "rslave", OPT_PROP, MS_SLAVE | MS_REC },
  { "unbindable", OPT_PROP, MS_UNBINDABLE },
  { "runbindable", OPT_PROP, MS_UNBINDABLE | MS_REC },
  { "idmap", OPT_IDMAP, 0 },
  { "ridmap", OPT_IDMAP, MS_REC },
  { "tmpcopyup", OPT_IGNORE, 0 },
  /* runtime-spec 1.2 recursive mount attributes (config.md "Mounts"):
   * mount_setattr(2) with AT_RECURSIVE, over every submount of the mount.
   * Plain "ro" on an rbind changes only its top mount, as in runc and crun. */
  { "rro", OPT_RFLAG, MS_RDONLY },
  { "rrw", OPT_RCLEAR, MS_RDONLY },
  { "rnosuid", OPT_RFLAG, MS_NOSUID },
  { "rsuid", OPT_RCLEAR, MS_NOSUID },
  { "rnodev", OPT_RFLAG, MS_NODEV },
  { "rdev", OPT_RCLEAR, MS_NODEV },
  { "rnoexec", OPT_RFLAG, MS_NOEXEC },
  { "rexec", OPT_RCLEAR, MS_NOEXEC },
  { "rnodiratime", OPT_RFLAG, MS_NODIRATIME },
  { "rdiratime", OPT_RCLEAR, MS_NODIRATIME },
  { "rnoatime", OPT_RFLAG, MS_NOATIME },
  { "ratime", OPT_RCLEAR, MS_NOATIME },
  { "rrelatime", OPT_RFLAG, MS_RELATIME },
  { "rnorelatime", OPT_RCLEAR, MS_RELATIME },
  { "rstrictatime", OPT_RFLAG, MS_STRICTATIME },
  { "rnostrictatime", OPT_RCLEAR, MS_STRICTATIME },
  { "rnosymfollow", OPT_RFLAG, MS_NOSYMFOLLOW },
  { "rsymfollow", OPT_RCLEAR, MS_NOSYMFOLLOW },
};

static const struct mount_opt *
find_opt (const char *name)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (mount_opts); i++)
    if (strcmp (mount_opts[i].name, name) == 0)
      return &mount_opts[i];
  return NULL;
}

void
data_append (char **data, const char *opt)
{
  char *old = *data;
  *data = old ? xasprintf ("%s,%s", old, opt) : xstrdup (opt);
  free (old);
}

int
pr_mount_parse_options (char *const *options, struct pr_mount_flags *out, pr_error **err)
{
  memset (out, 0, sizeof *out);
  for (size_t i = 0; options && options[i]; i++)
    {
      const char *o = options[i];
      if (*o == '\0')
        continue;
      const struct mount_opt *m = find_opt (o);
      if (m == NULL)
        {
          data_append (&out->data, o);
          continue;
        }
      switch (m->kind)
        {
        case OPT_FLAG:
          out->flags |= m->flag;
          out->clear_flags &= ~m->flag;
          break;
        case OPT_CLEAR:
          out->flags &= ~m->flag;
          out->clear_flags |= m->flag;
          break;
        case OPT_RFLAG:
          out->rec_flags |= m->flag;
          out->rec_clear_flags &= ~m->flag;
          break;
        case OPT_RCLEAR:
          out->rec_flags &= ~m->flag;
          out->rec_clear_flags |= m->flag;
          break;
        case OPT_PROP:
          out->propagation = m->flag;
          break;
        case OPT_BIND:
          out->bind = true;
          out->flags |= MS_BIND;
          break;
        case OPT_RBIND:
          out->bind = true;
          out->recursive = true;
          out->flags |= MS_BIND | MS_REC;
          break;
        case OPT_IDMAP:
          out->idmap = true;
          if (m->flag & MS_REC)
            out->recursive = true;
          break;
        case OPT_IGNORE:
          break;
        }
    }
  return 0;
}

void
mount_flags_free (struct pr_mount_flags *f)
{
  free (f->data);
  f->data = NULL;
}

bool
has_option (char *const *options, const char *name)
{
  for (size_t i = 0; options && options[i]; i++)
    if (strcmp (options[i], name) == 0)
      return true;
  return false;
}

int
parse_propagation (const char *name, unsigned long *out)
{
  const struct mount_opt *m = name ? find_opt (name) : NULL;
  if (m == NULL || m->kind != OPT_PROP)
    return -1;
  *out = m->flag;
  return 0;
}

