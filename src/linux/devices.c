/* devices.c - the default devices, linux.devices and the /dev symlinks
 * inside the container's rootfs (see devices.h).  Every path is resolved
 * inside the rootfs (safepath.h) and the node itself is created relative to
 * its parent directory fd, so a symlink in the image never redirects a
 * mknod, chown or bind mount to the host. */
#define _GNU_SOURCE
#include "devices.h"
#include "devices-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mount-internal.h"
#include "safepath.h"
#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

struct dev_node
{
  const char *path;
  mode_t type; /* S_IFCHR, S_IFBLK, S_IFIFO */
  unsigned major, minor;
  mode_t mode;
  uid_t uid;
  gid_t gid;
};

/* runtime-spec config-linux.md "Default Devices", in the order crun
 * makes them: with a user namespace each is a mount, and mountinfo lists
 * mounts in the order they were made (a rollout must read like a plain
 * container, SPEC section 2 "Filesystem"). */
static const struct dev_node default_devices[] = {
  { "/dev/null", S_IFCHR, 1, 3, 0666, 0, 0 },
  { "/dev/zero", S_IFCHR, 1, 5, 0666, 0, 0 },
  { "/dev/full", S_IFCHR, 1, 7, 0666, 0, 0 },
  { "/dev/tty", S_IFCHR, 5, 0, 0666, 0, 0 },
  { "/dev/random", S_IFCHR, 1, 8, 0666, 0, 0 },
  { "/dev/urandom", S_IFCHR, 1, 9, 0666, 0, 0 },
};

/* /dev/core is not in the runtime-spec, but runc and crun both make it:
 * without it a container's /dev tells which runtime made it. */
static const char *const default_links[][2] = {
  { "/dev/core", "/proc/kcore" },
  { "/dev/ptmx", "pts/ptmx" },
  { "/dev/fd", "/proc/self/fd" },
  { "/dev/stdin", "/proc/self/fd/0" },
  { "/dev/stdout", "/proc/self/fd/1" },
  { "/dev/stderr", "/proc/self/fd/2" },
};

/* Splits an absolute path into a malloc'd parent and a pointer to its last
 * component (inside path).  Returns -1 when there is no usable last
 * component ("/", "/dev/.."). */
static int
split_path (const char *path, char **parent, const char **base)
{
  const char *slash = strrchr (path, '/');
  if (slash == NULL || slash[1] == '\0' || strcmp (slash + 1, ".") == 0 || strcmp (slash + 1, "..") == 0)
    return -1;
  size_t n = (size_t) (slash - path);
  *parent = xmalloc (n + 2);
  memcpy (*parent, path, n);
  (*parent)[n ? n : 1] = '\0';
  if (n == 0)
    (*parent)[0] = '/';
  *base = slash + 1;
  return 0;
}

/* Opens the parent directory of path inside the root (creating it) and
 * removes a leftover non-directory entry at the last component unless it
 * already is the wanted node.  *exists is set when the right node is there. */
static int
prepare_node_slot (int rootfd, const struct dev_node *d, int *parent_out, const char **base_out,
                   bool *exists, pr_error **err)
{
  _cleanup_free_ char *parent = NULL;
  const char *base;
  if (d->path[0] != '/' || split_path (d->path, &parent, &base) < 0)
    return pr_error_invalid (err, "invalid device path `%s`", d->path);

  _cleanup_close_ int pfd = -1;
  if (pr_safe_mkdir_p (rootfd, parent, 0755, &pfd, err) < 0)
    return pr_error_wrap (err, "create device `%s`", d->path);

  *exists = false;
  struct stat st;
  if (fstatat (pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (st.st_mode))
        return pr_error_set (err, EEXIST, "create device `%s`: a directory is in the way", d->path);
      if ((st.st_mode & S_IFMT) == d->type
          && (d->type == S_IFIFO || st.st_rdev == makedev (d->major, d->minor)))
        *exists = true;
      /* A symlink (possibly to a host path) or any other file planted by
       * the image is replaced; unlinkat never follows it. */
      else if (unlinkat (pfd, base, 0) < 0)
        return pr_error_set (err, errno, "remove `%s` to create the device", d->path);
    }
  else if (errno != ENOENT)
    return pr_error_set (err, errno, "stat `%s`", d->path);

  *parent_out = steal_fd (&pfd);
  *base_out = base;
  return 0;
}

/* Sets mode and owner of the node through an O_PATH fd: the magic link
 * /proc/self/fd/N reaches exactly that inode, never a symlink target. */
static int
fix_node_attrs (int pfd, const char *base, const struct dev_node *d, pr_error **err)
{
  _cleanup_close_ int fd = openat (pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open device `%s`", d->path);
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  if (chmod (p, d->mode & 07777) < 0)
    return pr_error_set (err, errno, "chmod device `%s`", d->path);
  if (fchownat (fd, "", d->uid, d->gid, AT_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "chown device `%s` to %u:%u", d->path, (unsigned) d->uid, (unsigned) d->gid);
  return 0;
}

static int
mknod_device (int rootfd, const struct dev_node *d, pr_error **err)
{
  _cleanup_close_ int pfd = -1;
  const char *base;
  bool exists;
  if (prepare_node_slot (rootfd, d, &pfd, &base, &exists, err) < 0)
    return -1;
  if (!exists && mknodat (pfd, base, d->type | (d->mode & 07777), makedev (d->major, d->minor)) < 0)
    return pr_error_set (err, errno, "mknod `%s`", d->path);
  return fix_node_attrs (pfd, base, d, err);
}

/* In a user namespace mknod(2) is refused, so the host's node at the same
 * path is bind-mounted onto an empty file (its mode and owner are the
 * host's), nosuid and noexec as crun's binds are ("rw,nosuid,noexec,
 * relatime" in mountinfo, whatever the host's /dev has). */
static int
bind_device (int rootfd, const struct dev_node *d, pr_error **err)
{
  _cleanup_close_ int pfd = -1;
  const char *base;
  bool exists;
  if (prepare_node_slot (rootfd, d, &pfd, &base, &exists, err) < 0)
    return -1;
  /* An existing matching node (a previous mknod by a privileged runtime)
   * cannot be opened in a nodev mount either, so bind over it too. */
  int fd = openat (pfd, base, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno != ENXIO && errno != EACCES && errno != EPERM)
    return pr_error_set (err, errno, "create bind target for device `%s`", d->path);
  if (fd >= 0)
    close (fd);
  _cleanup_close_ int target = openat (pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return pr_error_set (err, errno, "open bind target for device `%s`", d->path);
  char p[32];
  pr_fd_path (target, p, sizeof p);
  if (mount (d->path, p, NULL, MS_BIND, NULL) < 0)
    return pr_error_set (err, errno, "bind mount device `%s`", d->path);
  _cleanup_close_ int mnt = openat (pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (mnt < 0)
    return pr_error_set (err, errno, "open bind mount of device `%s`", d->path);
  pr_fd_path (mnt, p, sizeof p);
  return bind_remount (mnt, p, MS_NOSUID | MS_NOEXEC, 0, false, d->path, err);
}

/* Replaces the node's mount just attached at base (in pfd; target: an
 * O_PATH fd of the file under it) by a copy of itself made now: a mount's
 * id is from when it was made, mountinfo lists mounts by id, and stage 1
 * made the node's mount before the root was mounted.  The copy is listed
 * where crun's binds are, after the mounts of the config (SPEC section 2:
 * a rollout reads like a plain container).  Where no copy can be made the
 * first mount stays (the right node, listed earlier).  Errors: only when
 * the first was detached and the copy could not take its place. */
static int
renew_device_mount (int pfd, const char *base, int target, const struct dev_node *d, pr_error **err)
{
  _cleanup_close_ int first = openat (pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (first < 0)
    return 0;
  _cleanup_close_ int copy = pr_sys_open_tree (first, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (copy < 0)
    {
      pr_debug ("device `%s`: no copy of its mount (%s), keeping the first", d->path, strerror (errno));
      return 0;
    }
  char p[32];
  pr_fd_path (first, p, sizeof p);
  if (umount2 (p, MNT_DETACH) < 0)
    {
      pr_debug ("device `%s`: the first mount stays (%s)", d->path, strerror (errno));
      return 0;
    }
  if (pr_sys_move_mount (copy, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "attach device `%s`", d->path);
  return 0;
}

/* Attaches tree, a detached mount of the node made by pr_devices_open, onto
 * an empty file at d->path (the slot prepared as for a bind). */
static int
attach_device (int rootfd, const struct dev_node *d, int tree, pr_error **err)
{
  _cleanup_close_ int pfd = -1;
  const char *base;
  bool exists;
  if (prepare_node_slot (rootfd, d, &pfd, &base, &exists, err) < 0)
    return -1;
  int fd = openat (pfd, base, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno != ENXIO && errno != EACCES && errno != EPERM)
    return pr_error_set (err, errno, "create mount target for device `%s`", d->path);
  if (fd >= 0)
    close (fd);
  _cleanup_close_ int target = openat (pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return pr_error_set (err, errno, "open mount target for device `%s`", d->path);
  if (pr_sys_move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "attach device `%s`", d->path);
  return renew_device_mount (pfd, base, target, d, err);
}

static int
create_link (int rootfd, const char *path, const char *target, pr_error **err)
{
  _cleanup_free_ char *parent = NULL;
  const char *base;
  if (split_path (path, &parent, &base) < 0)
    return pr_error_invalid (err, "invalid symlink path `%s`", path);
  _cleanup_close_ int pfd = -1;
  if (pr_safe_mkdir_p (rootfd, parent, 0755, &pfd, err) < 0)
    return -1;
  /* An existing entry (image-provided or a configured device) wins. */
  if (symlinkat (target, pfd, base) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "symlink `%s` -> `%s`", path, target);
  return 0;
}

/* The empty file the pty is bound onto at /dev/console once it exists
 * (console.c, after pivot_root), made now while /dev is still writable
 * (a "ro" /dev turns read-only before that).  A non-regular entry is
 * replaced, never followed. */
static int
create_console_target (int rootfd, pr_error **err)
{
  _cleanup_close_ int dev = -1;
  if (pr_safe_mkdir_p (rootfd, "/dev", 0755, &dev, err) < 0)
    return -1;
  struct stat st;
  if (fstatat (dev, "console", &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISREG (st.st_mode))
        return 0;
      if (unlinkat (dev, "console", S_ISDIR (st.st_mode) ? AT_REMOVEDIR : 0) < 0)
        return pr_error_set (err, errno, "remove `/dev/console` to make the console's mount target");
    }
  int fd = openat (dev, "console", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return pr_error_set (err, errno, "create `/dev/console`");
  close (fd);
  return 0;
}

static int
create_shm_dir (int rootfd, pr_error **err)
{
  _cleanup_close_ int dev = -1;
  if (pr_safe_mkdir_p (rootfd, "/dev", 0755, &dev, err) < 0)
    return -1;
  struct stat st;
  if (fstatat (dev, "shm", &st, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (mkdirat (dev, "shm", 01777) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "mkdir `/dev/shm`");
  _cleanup_close_ int fd = openat (dev, "shm", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open `/dev/shm`");
  char p[32];
  pr_fd_path (fd, p, sizeof p);
  /* mkdir's mode went through the umask */
  if (chmod (p, 01777) < 0)
    return pr_error_set (err, errno, "chmod `/dev/shm`");
  return 0;
}

static int
config_device_node (const struct pr_device *cd, struct dev_node *out, pr_error **err)
{
  memset (out, 0, sizeof *out);
  out->path = cd->path;
  switch (cd->type)
    {
    case 'c':
    case 'u':
      out->type = S_IFCHR;
      break;
    case 'b':
      out->type = S_IFBLK;
      break;
    case 'p':
      out->type = S_IFIFO;
      break;
    default:
      return pr_error_invalid (err, "device `%s`: unknown type `%c`", cd->path, cd->type);
    }
  if (cd->major < 0 || cd->minor < 0 || cd->major > 0xfffff || cd->minor > 0xfffff)
    return pr_error_invalid (err, "device `%s`: invalid major/minor", cd->path);
  out->major = (unsigned) cd->major;
  out->minor = (unsigned) cd->minor;
  out->mode = cd->has_file_mode ? (cd->file_mode & 07777) : 0666;
  out->uid = cd->has_uid ? cd->uid : 0;
  out->gid = cd->has_gid ? cd->gid : 0;
  return 0;
}

static bool
configured (const struct pr_config *cfg, const char *path)
{
  for (size_t i = 0; i < cfg->linux.n_devices; i++)
    if (cfg->linux.devices[i].path && strcmp (cfg->linux.devices[i].path, path) == 0)
      return true;
  return false;
}

/* tree: the node's detached mount from pr_devices_open, or -1. */
static int
create_node (int rootfd, const struct dev_node *d, bool in_userns, int tree, pr_error **err)
{
  pr_debug ("creating device %s", d->path);
  if (tree >= 0)
    return attach_device (rootfd, d, tree, err);
  /* mknod(2) of a FIFO needs no capability, so it works in a userns too. */
  if (in_userns && d->type != S_IFIFO)
    return bind_device (rootfd, d, err);
  return mknod_device (rootfd, d, err);
}

int
pr_devices_create (const struct pr_config *cfg, int rootfd, bool in_userns, const int *dev_fds, pr_error **err)
{
  size_t nd = PR_ARRAY_SIZE (default_devices);
  for (size_t i = 0; i < nd; i++)
    if (!configured (cfg, default_devices[i].path)
        && create_node (rootfd, &default_devices[i], in_userns, dev_fds ? dev_fds[i] : -1, err) < 0)
      return -1;

  for (size_t i = 0; i < cfg->linux.n_devices; i++)
    {
      struct dev_node d;
      if (config_device_node (&cfg->linux.devices[i], &d, err) < 0)
        return -1;
      if (create_node (rootfd, &d, in_userns, dev_fds ? dev_fds[nd + i] : -1, err) < 0)
        return -1;
    }

  for (size_t i = 0; i < PR_ARRAY_SIZE (default_links); i++)
    if (create_link (rootfd, default_links[i][0], default_links[i][1], err) < 0)
      return -1;

  if (cfg->process.terminal && create_console_target (rootfd, err) < 0)
    return -1;
  return create_shm_dir (rootfd, err);
}

/* ---- stage 1: nodes for a user namespace --------------------------------- */

/* The host id that container id `id` maps to in maps, or (uid_t) -1 when
 * no range holds it (user_namespaces(7) uid_map lines). */
static uid_t
map_to_host (const struct pr_idmap *maps, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= maps[i].container_id && id - maps[i].container_id < maps[i].size)
      return (uid_t) (maps[i].host_id + (id - maps[i].container_id));
  return (uid_t) -1;
}

/* True when no range of maps reaches host id `id`: nobody in the
 * container is the owner of a file of that id, nor has a capability over
 * it (capabilities(7), "inode's UID and GID are mapped").  A container
 * without maps gets false: its ids are not known here. */
static bool
host_id_unmapped (const struct pr_idmap *maps, size_t n, uint32_t id)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (id >= maps[i].host_id && id - maps[i].host_id < maps[i].size)
      return false;
  return true;
}

/* True when default device d can be the host's own node, bound by the
 * init as crun binds it (its mountinfo line then reads exactly as
 * crun's): the host's node at the path is that device with that mode,
 * and its owner is unmapped in the container, so the bind gives the
 * container no way to chmod or chown the host's inode.  Under an identity
 * map (a rollout's) the owner is mapped and a private node is made. */
static bool
host_node_fits (const struct pr_config *cfg, const struct dev_node *d)
{
  struct stat st;
  if (lstat (d->path, &st) < 0 || (st.st_mode & S_IFMT) != d->type || st.st_rdev != makedev (d->major, d->minor)
      || (st.st_mode & 07777) != (d->mode & 07777))
    return false;
  return host_id_unmapped (cfg->linux.uid_mappings, cfg->linux.n_uid_mappings, st.st_uid)
         && host_id_unmapped (cfg->linux.gid_mappings, cfg->linux.n_gid_mappings, st.st_gid);
}

/* The name of device i in the private tmpfs: its path below /dev when it
 * has one without "." or ".." components ("null", "net/tun": a bind's
 * mountinfo root field is this path, "/null" as for crun's bind of the
 * host's node), else "devI".  Writes into buf (size n). */
static void
node_name (const struct dev_node *d, size_t i, char *buf, size_t n)
{
  const char *rel = strncmp (d->path, "/dev/", 5) == 0 ? d->path + 5 : NULL;
  if (rel && *rel && strlen (rel) < n && strstr (rel, "//") == NULL && rel[strlen (rel) - 1] != '/')
    {
      bool dots = false;
      for (const char *c = rel; *c; c = strchrnul (c, '/'), c += *c == '/')
        {
          size_t l = strcspn (c, "/");
          if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
            dots = true;
        }
      if (!dots)
        {
          snprintf (buf, n, "%s", rel);
          return;
        }
    }
  snprintf (buf, n, "dev%zu", i);
}

/* Makes the parent directories of name (relative, no dots) inside the
 * private tmpfs mnt, mode 0755 as the host's /dev directories are. */
static int
node_parents (int mnt, const char *name, const struct dev_node *d, pr_error **err)
{
  _cleanup_free_ char *copy = xstrdup (name);
  for (char *s = strchr (copy, '/'); s; s = strchr (s + 1, '/'))
    {
      *s = '\0';
      if (mkdirat (mnt, copy, 0755) < 0 && errno != EEXIST)
        return pr_error_set (err, errno, "mkdir `%s` for device `%s`", copy, d->path);
      *s = '/';
    }
  return 0;
}

/* The host node's access and modification times onto the private node,
 * when the host has that device at the path (ls -l shows them).  Best
 * effort: a node without them is still the right one. */
static void
copy_host_times (int mnt, const char *name, const struct dev_node *d)
{
  struct stat st;
  if (lstat (d->path, &st) < 0 || (st.st_mode & S_IFMT) != d->type || st.st_rdev != makedev (d->major, d->minor))
    return;
  struct timespec ts[2] = { st.st_atim, st.st_mtim };
  if (utimensat (mnt, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
    pr_debug ("times of device `%s`: %s", d->path, strerror (errno));
}

/* Makes node d as entry `name` of the private tmpfs mnt (mode, and owner
 * mapped to host ids through the container's maps) and returns a detached
 * mount of that one node in *tree. */
static int
private_node (const struct pr_config *cfg, int mnt, const char *name, const struct dev_node *d, int *tree,
              pr_error **err)
{
  if (node_parents (mnt, name, d, err) < 0)
    return -1;
  if (mknodat (mnt, name, d->type | (d->mode & 07777), makedev (d->major, d->minor)) < 0)
    return pr_error_set (err, errno, "mknod `%s`", d->path);
  uid_t uid = map_to_host (cfg->linux.uid_mappings, cfg->linux.n_uid_mappings, d->uid);
  gid_t gid = map_to_host (cfg->linux.gid_mappings, cfg->linux.n_gid_mappings, d->gid);
  if (fchownat (mnt, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return pr_error_set (err, errno, "chown device `%s`", d->path);
  if (fchmodat (mnt, name, d->mode & 07777, 0) < 0)
    return pr_error_set (err, errno, "chmod device `%s`", d->path);
  copy_host_times (mnt, name, d);
  *tree = pr_sys_open_tree (mnt, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (*tree < 0)
    return pr_error_set (err, errno, "open_tree device `%s`", d->path);
  return 0;
}

size_t
pr_devices_count (const struct pr_config *cfg)
{
  return PR_ARRAY_SIZE (default_devices) + cfg->linux.n_devices;
}

static void
close_fds (int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  free (fds);
}

int
pr_devices_open (const struct pr_config *cfg, int **fds_out, pr_error **err)
{
  *fds_out = NULL;
  size_t nd = PR_ARRAY_SIZE (default_devices), n = pr_devices_count (cfg);
  int *fds = xmalloc0 (n * sizeof *fds);
  for (size_t i = 0; i < n; i++)
    fds[i] = -1;
  _cleanup_close_ int mnt = -1;
  if (pr_devices_private_tmpfs (&mnt, err) < 0)
    {
      free (fds);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      struct dev_node d;
      if (i < nd)
        {
          if (configured (cfg, default_devices[i].path))
            continue;
          d = default_devices[i];
          /* -1: the init binds the host's node (bind_device). */
          if (host_node_fits (cfg, &d))
            continue;
        }
      else if (config_device_node (&cfg->linux.devices[i - nd], &d, err) < 0)
        {
          close_fds (fds, n);
          return -1;
        }
      if (d.type == S_IFIFO)
        continue; /* the init can mknod a FIFO itself */
      char name[256];
      node_name (&d, i, name, sizeof name);
      pr_error *e = NULL;
      if (private_node (cfg, mnt, name, &d, &fds[i], &e) == 0)
        continue;
      /* Two entries with one path, or a device where another's directory
       * goes (/dev/net and /dev/net/tun): the unique name then. */
      if (e->errnum == EEXIST || e->errnum == ENOTDIR)
        {
          pr_error_free (&e);
          snprintf (name, sizeof name, "dev%zu", i);
          if (private_node (cfg, mnt, name, &d, &fds[i], &e) == 0)
            continue;
        }
      /* The device cgroup may refuse the mknod ("m" not allowed): the init
       * then binds the host's node, as before. */
      if (e->errnum == EPERM && fds[i] < 0)
        {
          pr_debug ("%s; binding the host's node instead", e->msg);
          pr_error_free (&e);
          continue;
        }
      if (err && *err == NULL)
        *err = e;
      else
        pr_error_free (&e);
      close_fds (fds, n);
      return -1;
    }
  *fds_out = fds;
  return 0;
}
