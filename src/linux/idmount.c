/* idmount.c - bind sources cloned in the runtime's namespaces: idmapped
 * bind mounts (validation, the detached idmapped clones) and, for a
 * container with a user namespace, every other bind source; and their
 * attachment inside the rootfs (see idmount.h). */
#define _GNU_SOURCE
#include "idmount.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mount-internal.h"
#include "namespace.h"
#include "safepath.h"
#include "../base/syscall.h"
#include "../base/util.h"

/* crun's "idmap=uids=...;gids=..." form carries the mappings in the
 * option itself. */
static const char *
valued_idmap_option (const struct pr_mount *m)
{
  for (size_t i = 0; m->options && m->options[i]; i++)
    if (strncmp (m->options[i], "idmap=", 6) == 0 || strncmp (m->options[i], "ridmap=", 7) == 0)
      return m->options[i];
  return NULL;
}

bool
pr_idmount_wanted (const struct pr_mount *m)
{
  return has_option (m->options, "idmap") || has_option (m->options, "ridmap") || valued_idmap_option (m)
         || m->n_uid_mappings > 0 || m->n_gid_mappings > 0;
}

int
pr_idmount_validate (const struct pr_config *cfg, pr_error **err)
{
  const struct pr_namespace *user = pr_config_namespace (cfg, CLONE_NEWUSER);
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      const struct pr_mount *m = &cfg->mounts[i];
      if (!pr_idmount_wanted (m))
        continue;
      const char *d = m->destination ? m->destination : "";
      const char *valued = valued_idmap_option (m);
      /* Passing it on as filesystem data would make a plain bind mount:
       * less than was asked for, silently. */
      if (valued)
        return pr_error_invalid (err,
                                 "config.json: mounts[%zu] (%s): option `%s`: mappings inside the option are not "
                                 "supported; give the mount uidMappings and gidMappings with `idmap`",
                                 i, d, valued);
      if (!pr_mount_is_bind (m))
        return pr_error_invalid (err, "config.json: mounts[%zu] (%s): idmapped mounts must be bind mounts", i, d);
      if ((m->n_uid_mappings > 0) != (m->n_gid_mappings > 0))
        return pr_error_invalid (err, "config.json: mounts[%zu] (%s): uidMappings and gidMappings go together", i,
                                 d);
      /* runtime-spec: without mappings of its own the mount MAY use the
       * container's user namespace mapping; with no user namespace either,
       * an error MUST be returned. */
      if (m->n_uid_mappings == 0 && user == NULL)
        return pr_error_invalid (err,
                                 "config.json: mounts[%zu] (%s): idmap without uidMappings/gidMappings needs a "
                                 "user namespace",
                                 i, d);
    }
  return 0;
}

/* A user namespace holding the given maps, as an fd: a child is cloned
 * straight into a new user namespace, its maps written from here (the
 * runtime is privileged over it), and its /proc/PID/ns/user opened before
 * it exits.  The namespace lives on through the fd. */
static int
userns_with_maps (const struct pr_idmap *uids, size_t n_uids, const struct pr_idmap *gids, size_t n_gids, int *out,
                  pr_error **err)
{
  int hold[2];
  if (pipe2 (hold, O_CLOEXEC) < 0)
    return pr_error_set (err, errno, "pipe");
  pid_t pid = pr_sys_clone (CLONE_NEWUSER | SIGCHLD);
  if (pid < 0)
    {
      int e = errno;
      close (hold[0]);
      close (hold[1]);
      return pr_error_set (err, e, "clone a user namespace for an idmapped mount");
    }
  if (pid == 0)
    {
      char b;
      close (hold[1]);
      /* Wait until the parent has opened our namespace (EOF). */
      while (read (hold[0], &b, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (hold[0]);
  int r = pr_idmap_write_maps (pid, uids, n_uids, gids, n_gids, err);
  if (r == 0)
    r = pr_ns_open_pid (pid, CLONE_NEWUSER, out, err);
  close (hold[1]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return r;
}

/* The user namespace whose mapping mount m uses: its own mappings, else
 * the container's (the namespace it joins by path, or one made with the
 * same maps as the one it will create).  *cached keeps the container's
 * for the next mount. */
static int
mapping_userns (const struct pr_config *cfg, const struct pr_mount *m, int *cached, int *out, pr_error **err)
{
  if (m->n_uid_mappings > 0)
    return userns_with_maps (m->uid_mappings, m->n_uid_mappings, m->gid_mappings, m->n_gid_mappings, out, err);
  if (*cached < 0)
    {
      const struct pr_namespace *user = pr_config_namespace (cfg, CLONE_NEWUSER);
      if (user && user->path)
        {
          *cached = open (user->path, O_RDONLY | O_CLOEXEC);
          if (*cached < 0)
            return pr_error_set (err, errno, "open user namespace `%s`", user->path);
        }
      else if (userns_with_maps (cfg->linux.uid_mappings, cfg->linux.n_uid_mappings, cfg->linux.gid_mappings,
                                 cfg->linux.n_gid_mappings, cached, err)
               < 0)
        return -1;
    }
  *out = dup (*cached);
  if (*out < 0)
    return pr_error_set (err, errno, "dup");
  return 0;
}

/* Whether m's copy stays in its source's peer group: when the mount asks
 * for shared propagation, or the whole rootfs is shared
 * (rootfsPropagation shared/rshared), as a bind made by the init would. */
static bool
keeps_peers (const struct pr_config *cfg, const struct pr_mount *m)
{
  const char *rp = cfg->linux.rootfs_propagation;
  if (rp && (strcmp (rp, "shared") == 0 || strcmp (rp, "rshared") == 0))
    return true;
  for (size_t i = 0; m->options && m->options[i]; i++)
    if (strcmp (m->options[i], "shared") == 0 || strcmp (m->options[i], "rshared") == 0)
      return true;
  return false;
}

/* A detached copy of bind mount m's source (open_tree(2) OPEN_TREE_CLONE,
 * AT_RECURSIVE for rbind), looked up now with the runtime's credentials
 * and in its mount namespace.  The source is a host path, relative ones to
 * the bundle (bundlefd), trusted like any bind source.  A copy made here
 * would be a peer of a shared host mount, so that mounts made inside the
 * container reached the host; the init's own bind was made from its
 * rslave copy of the host's mounts.  So, unless shared propagation is
 * asked for, the copy is made rslave (mount_setattr(2) propagation). */
static int
clone_source (const struct pr_config *cfg, int bundlefd, const struct pr_mount *m, int *fd_out, pr_error **err)
{
  bool rbind = has_option (m->options, "rbind");
  const char *src = m->source && *m->source ? m->source : "";
  const char *d = m->destination ? m->destination : "";
  _cleanup_close_ int tree
      = pr_sys_open_tree (bundlefd, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rbind ? AT_RECURSIVE : 0));
  if (tree < 0)
    return pr_error_set (err, errno, "bind mount `%s` to `%s`: open_tree", src, d);
  struct mount_attr attr = { .propagation = MS_SLAVE };
  if (!keeps_peers (cfg, m) && pr_sys_mount_setattr (tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
    return pr_error_set (err, errno, "bind mount `%s` to `%s`: make the copy rslave", src, d);
  *fd_out = steal_fd (&tree);
  return 0;
}

static int
open_one (const struct pr_config *cfg, int bundlefd, const struct pr_mount *m, int *cached_userns, int *fd_out,
          pr_error **err)
{
  bool ridmap = has_option (m->options, "ridmap");
  const char *src = m->source && *m->source ? m->source : "";

  _cleanup_close_ int tree = -1;
  if (clone_source (cfg, bundlefd, m, &tree, err) < 0)
    return -1;
  _cleanup_close_ int userns = -1;
  if (mapping_userns (cfg, m, cached_userns, &userns, err) < 0)
    return pr_error_wrap (err, "idmapped mount `%s` to `%s`", src, m->destination);
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) userns };
  if (pr_sys_mount_setattr (tree, "", AT_EMPTY_PATH | (ridmap ? AT_RECURSIVE : 0), &attr, sizeof attr) < 0)
    {
      if (errno == EINVAL)
        return pr_error_set (err, errno, "idmapped mount `%s` to `%s`: the filesystem cannot be idmapped", src,
                             m->destination);
      return pr_error_set (err, errno, "idmapped mount `%s` to `%s`: mount_setattr", src, m->destination);
    }
  *fd_out = tree;
  tree = -1;
  return 0;
}

/* Whether bind mount m's source is cloned in stage 1 (see
 * pr_bind_sources_open): an idmapped one always; a plain one when the
 * container has a user namespace and a mount namespace of its own. */
static bool
wants_clone (const struct pr_mount *m, bool userns)
{
  if (pr_idmount_wanted (m))
    return true;
  return userns && pr_mount_is_bind (m) && m->source && *m->source;
}

int
pr_bind_sources_open (const struct pr_config *cfg, const char *bundle, int **fds_out, pr_error **err)
{
  *fds_out = NULL;
  const struct pr_namespace *mnt = pr_config_namespace (cfg, CLONE_NEWNS);
  /* Joining a mount namespace by path, sources are that namespace's paths:
   * they are looked up by the init, which is in it. */
  bool userns = pr_config_namespace (cfg, CLONE_NEWUSER) != NULL && mnt != NULL && mnt->path == NULL;
  bool any = false;
  for (size_t i = 0; i < cfg->n_mounts && !any; i++)
    any = wants_clone (&cfg->mounts[i], userns);
  if (!any)
    return 0;

  _cleanup_close_ int bundlefd = open (bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bundlefd < 0)
    return pr_error_set (err, errno, "open bundle `%s`", bundle);
  int *fds = xmalloc0 (cfg->n_mounts * sizeof *fds);
  for (size_t i = 0; i < cfg->n_mounts; i++)
    fds[i] = -1;
  _cleanup_close_ int cached_userns = -1;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    {
      const struct pr_mount *m = &cfg->mounts[i];
      int r = 0;
      if (pr_idmount_wanted (m))
        r = open_one (cfg, bundlefd, m, &cached_userns, &fds[i], err);
      else if (wants_clone (m, userns))
        r = clone_source (cfg, bundlefd, m, &fds[i], err);
      if (r < 0)
        {
          for (size_t j = 0; j < i; j++)
            if (fds[j] >= 0)
              close (fds[j]);
          free (fds);
          return -1;
        }
    }
  *fds_out = fds;
  return 0;
}

int
pr_bind_source_attach (int rootfd, const struct pr_mount *m, const struct pr_mount_flags *f, int fd, pr_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return pr_error_set (err, errno, "bind mount to `%s`: stat the source", m->destination);

  _cleanup_close_ int target = -1;
  if (pr_safe_create_target (rootfd, m->destination, S_ISDIR (st.st_mode), &target, err) < 0)
    return pr_error_wrap (err, "bind mount to `%s`", m->destination);
  if (pr_sys_move_mount (fd, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return pr_error_set (err, errno, "bind mount to `%s`: move_mount", m->destination);
  return bind_finish (rootfd, m, f, err);
}
