/* lsm.c - owns the LSM labels of the container process: the AppArmor exec
 * profile and the SELinux exec context.  libselinux is optional at build
 * time; without it SELinux counts as disabled. */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "lsm.h"

#include "procfs.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#ifdef HAVE_SELINUX
#include <selinux/selinux.h>
#endif

static bool
apparmor_enabled (void)
{
  char buf[2] = { 0 };
  _cleanup_close_ int fd = open ("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);

  return fd >= 0 && read (fd, buf, 1) == 1 && buf[0] == 'Y';
}

/* Opens the calling thread's attr file `rest` ("attr/apparmor/exec") for
 * writing through a procfs of our own, crossing no mount and no symlink:
 * a container image must not be able to stand in a file of its own for
 * the label write (CVE-2019-16884), nor a racing mount another procfs file
 * (CVE-2025-52881; procfs.h). */
static int
open_proc_attr (const char *rest, int *fd_out, pr_error **err)
{
  char path[96];
  pr_procfs_self_path (path, sizeof path, rest);
  return pr_procfs_open (path, O_WRONLY, fd_out, err);
}

static int
apparmor_set_exec (const char *profile, pr_error **err)
{
  _cleanup_free_ char *cmd = xasprintf ("exec %s", profile);
  _cleanup_close_ int fd = -1;
  pr_error *first = NULL;

  /* The per-LSM directory exists since Linux 5.8; older kernels only have
   * the shared attr file. */
  if (open_proc_attr ("attr/apparmor/exec", &fd, &first) < 0)
    {
      int e = first->errnum;
      pr_error_free (&first);
      if (e != ENOENT)
        return pr_error_set (err, e, "set apparmor profile `%s`: open `attr/apparmor/exec`", profile);
      if (open_proc_attr ("attr/exec", &fd, err) < 0)
        return pr_error_wrap (err, "set apparmor profile `%s`", profile);
    }
  if (pr_write_all (fd, cmd, strlen (cmd)) < 0)
    return pr_error_set (err, errno, "set apparmor profile `%s`", profile);
  return 0;
}

int
pr_selinux_enabled (void)
{
#ifdef HAVE_SELINUX
  return is_selinux_enabled () > 0;
#else
  return 0;
#endif
}

int
pr_lsm_set_exec_labels (const char *apparmor_profile, const char *selinux_label, pr_error **err)
{
  if (apparmor_profile && apparmor_profile[0])
    {
      if (!apparmor_enabled ())
        pr_debug ("apparmor is not enabled, profile `%s` ignored", apparmor_profile);
      else if (apparmor_set_exec (apparmor_profile, err) < 0)
        return -1;
    }

  if (selinux_label && selinux_label[0])
    {
      if (!pr_selinux_enabled ())
        pr_debug ("selinux is not enabled, label `%s` ignored", selinux_label);
#ifdef HAVE_SELINUX
      else if (setexeccon (selinux_label) < 0)
        return pr_error_set (err, errno, "set selinux exec label `%s`", selinux_label);
#endif
    }
  return 0;
}
