/* namespace.c - opening, joining and creating namespaces; uid/gid maps. */
#define _GNU_SOURCE
#include "namespace.h"
#include "../base/syscall.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/nsfs.h>

const int pr_ns_join_order[8] = { CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNET,
                                  CLONE_NEWPID, CLONE_NEWTIME, CLONE_NEWCGROUP, CLONE_NEWNS };

void
pr_ns_close_fds (int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

static int
check_ns_type (int fd, int type, const char *path, pr_error **err)
{
  int t = ioctl (fd, NS_GET_NSTYPE);
  if (t < 0)
    return pr_error_set (err, errno, "`%s` is not a namespace file", path);
  if (t != type)
    return pr_error_invalid (err, "`%s` is not a %s namespace", path, pr_namespace_name (type));
  return 0;
}

int
pr_ns_open_paths (const struct pr_config *cfg, int **fds_out, pr_error **err)
{
  size_t n = cfg->linux.n_namespaces;
  int *fds = xmalloc0 ((n + 1) * sizeof (int));

  for (size_t i = 0; i < n; i++)
    fds[i] = -1;
  for (size_t i = 0; i < n; i++)
    {
      const struct pr_namespace *ns = &cfg->linux.namespaces[i];
      if (ns->path == NULL)
        continue;
      fds[i] = open (ns->path, O_RDONLY | O_CLOEXEC);
      if (fds[i] < 0)
        {
          pr_error_set (err, errno, "open %s namespace path `%s`", pr_namespace_name (ns->type), ns->path);
          pr_ns_close_fds (fds, n);
          return -1;
        }
      if (check_ns_type (fds[i], ns->type, ns->path, err) < 0)
        {
          pr_ns_close_fds (fds, n);
          return -1;
        }
    }
  *fds_out = fds;
  return 0;
}

int
pr_ns_join (const struct pr_config *cfg, const int *fds, bool only_user, pr_error **err)
{
  for (size_t o = 0; o < PR_ARRAY_SIZE (pr_ns_join_order); o++)
    {
      int type = pr_ns_join_order[o];
      if (only_user != (type == CLONE_NEWUSER))
        continue;
      for (size_t i = 0; i < cfg->linux.n_namespaces; i++)
        {
          if (cfg->linux.namespaces[i].type != type || fds[i] < 0)
            continue;
          if (setns (fds[i], type) < 0)
            return pr_error_set (err, errno, "join %s namespace `%s`", pr_namespace_name (type),
                                 cfg->linux.namespaces[i].path);
        }
    }
  return 0;
}

int
pr_ns_new_flags (const struct pr_config *cfg)
{
  int flags = 0;
  for (size_t i = 0; i < cfg->linux.n_namespaces; i++)
    if (cfg->linux.namespaces[i].path == NULL)
      flags |= cfg->linux.namespaces[i].type;
  return flags;
}

static char *
format_map (const struct pr_idmap *m, size_t n)
{
  size_t cap = 64 * (n + 1);
  char *buf = xmalloc0 (cap);
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += snprintf (buf + len, cap - len, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
  return buf;
}

static int
write_map (pid_t pid, const char *file, const struct pr_idmap *m, size_t n, pr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/%s", pid, file);
  _cleanup_free_ char *text = format_map (m, n);
  _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", path);
  /* The kernel accepts a map in exactly one write(2). */
  if (write (fd, text, strlen (text)) < 0)
    return pr_error_set (err, errno, "write %s (%zu line%s, first `%u %u %u`)", file, n, n == 1 ? "" : "s",
                         n ? m[0].container_id : 0, n ? m[0].host_id : 0, n ? m[0].size : 0);
  return 0;
}

int
pr_idmap_write_maps (pid_t pid, const struct pr_idmap *uids, size_t n_uids, const struct pr_idmap *gids,
                     size_t n_gids, pr_error **err)
{
  if (write_map (pid, "uid_map", uids, n_uids, err) < 0)
    return -1;
  return write_map (pid, "gid_map", gids, n_gids, err);
}

int
pr_idmap_write (pid_t pid, const struct pr_config *cfg, pr_error **err)
{
  const struct pr_linux *l = &cfg->linux;
  if (l->n_uid_mappings == 0 || l->n_gid_mappings == 0)
    return pr_error_invalid (err, "a new user namespace needs linux.uidMappings and linux.gidMappings");
  return pr_idmap_write_maps (pid, l->uid_mappings, l->n_uid_mappings, l->gid_mappings, l->n_gid_mappings, err);
}

int
pr_ns_open_pid (pid_t pid, int type, int *fd_out, pr_error **err)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/ns/%s", pid, pr_namespace_proc_name (type));
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `%s`", path);
  *fd_out = fd;
  return 0;
}

int
pr_ns_same (int a, int b, bool *same, pr_error **err)
{
  struct stat sa, sb;
  if (fstat (a, &sa) < 0 || fstat (b, &sb) < 0)
    return pr_error_set (err, errno, "fstat namespace file");
  *same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return 0;
}

int
pr_ns_owned_by (int ns_fd, int userns_fd, bool *owned, pr_error **err)
{
  _cleanup_close_ int owner = ioctl (ns_fd, NS_GET_USERNS);
  if (owner < 0)
    return pr_error_set (err, errno, "find the user namespace that owns a namespace (NS_GET_USERNS)");
  return pr_ns_same (owner, userns_fd, owned, err);
}

/* What the child of pr_ns_uts_names reports: errno of a failed step, or the
 * two names. */
struct uts_reply
{
  int errnum;
  char nodename[sizeof ((struct utsname *) 0)->nodename];
  char domainname[sizeof ((struct utsname *) 0)->domainname];
};

int
pr_ns_uts_names (int uts_fd, char **hostname, char **domainname, pr_error **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return pr_error_set (err, errno, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return pr_error_set (err, e, "fork to read the hostname of a uts namespace");
    }
  if (pid == 0)
    {
      struct uts_reply r = { 0 };
      struct utsname u;
      close (p[0]);
      if (setns (uts_fd, CLONE_NEWUTS) < 0 || uname (&u) < 0)
        r.errnum = errno;
      else
        {
          memcpy (r.nodename, u.nodename, sizeof r.nodename);
          memcpy (r.domainname, u.domainname, sizeof r.domainname);
        }
      _exit (write (p[1], &r, sizeof r) == (ssize_t) sizeof r ? 0 : 1);
    }
  close (p[1]);
  struct uts_reply r = { 0 };
  ssize_t n = TEMP_FAILURE_RETRY (read (p[0], &r, sizeof r));
  int read_errno = errno;
  close (p[0]);
  TEMP_FAILURE_RETRY (waitpid (pid, NULL, 0));
  if (n != (ssize_t) sizeof r)
    return pr_error_set (err, n < 0 ? read_errno : EIO, "read the hostname of a uts namespace");
  if (r.errnum)
    return pr_error_set (err, r.errnum, "read the hostname of a uts namespace: join it");
  r.nodename[sizeof r.nodename - 1] = r.domainname[sizeof r.domainname - 1] = '\0';
  *hostname = xstrdup (r.nodename);
  *domainname = xstrdup (r.domainname);
  return 0;
}

pid_t
pr_clone_parent (void)
{
  return pr_sys_clone (CLONE_PARENT | SIGCHLD);
}

int
pr_idmap_copy (pid_t from, pid_t to, pr_error **err)
{
  static const char *const files[] = { "uid_map", "gid_map" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *src = xasprintf ("/proc/%d/%s", from, files[i]);
      _cleanup_free_ char *dst = xasprintf ("/proc/%d/%s", to, files[i]);
      _cleanup_free_ char *text = NULL;
      if (pr_read_file (src, &text, NULL, err) < 0)
        return -1;
      /* The kernel prints the map padded into columns; write it back in
       * the plain form map_write() parses. */
      _cleanup_free_ char *out = xmalloc0 (strlen (text) + 1);
      size_t len = 0;
      char *save = NULL;
      for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
        {
          unsigned long a, b, n;
          if (sscanf (line, "%lu %lu %lu", &a, &b, &n) == 3)
            len += sprintf (out + len, "%lu %lu %lu\n", a, b, n);
        }
      _cleanup_close_ int fd = open (dst, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        return pr_error_set (err, errno, "open `%s`", dst);
      if (write (fd, out, len) < 0)
        return pr_error_set (err, errno, "write `%s`", dst);
    }
  return 0;
}
