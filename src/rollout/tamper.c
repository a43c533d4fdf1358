/* tamper.c - the tamper report (see tamper.h). */
#define _GNU_SOURCE
#include "tamper.h"
#include "base.h"
#include "netfiles.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define GS(g, s) yajl_gen_string (g, (const unsigned char *) (s), strlen (s))

struct pattern
{
  const char *glob; /* fnmatch(3) with FNM_PATHNAME off: '*' spans '/' */
  const char *class;
};

/* Most specific first.  Home directories: /root and /home/<user>. */
static const struct pattern patterns[] = {
  { "/etc/hosts", "resolver" },
  { "/etc/resolv.conf", "resolver" },
  { "/etc/hostname", "resolver" },
  { "/etc/nsswitch.conf", "resolver" },
  { "/etc/host.conf", "resolver" },
  { "/etc/gai.conf", "resolver" },
  { "/etc/pam.conf", "pam" },
  { "/etc/pam.d*", "pam" },
  { "/etc/security*", "pam" },
  { "/etc/passwd", "login" },
  { "/etc/login.defs", "login" },
  { "/etc/default/su", "login" },
  { "/etc/default/runuser", "login" },
  { "/etc/default/locale", "login" },
  { "/etc/sudo.conf", "login" },
  { "/etc/sudoers", "login" },
  { "/etc/sudoers.d*", "login" },
  { "/etc/apt*", "packages" },
  { "/etc/dpkg*", "packages" },
  { "/var/lib/dpkg*", "packages" },
  { "/etc/ld.so.preload", "ld.so" },
  { "/etc/ld.so.conf", "ld.so" },
  { "/etc/ld.so.conf.d*", "ld.so" },
  { "/etc/ld.so.cache", "ld.so" },
  { "*/conftest.py", "pytest" },
  { "/pytest.ini", "pytest" },
  { "/.pytest.ini", "pytest" },
  { "/tox.ini", "pytest" },
  { "/setup.cfg", "pytest" },
  { "/pyproject.toml", "pytest" },
  { "*-packages/*.dist-info/entry_points.txt", "pytest" },
  { "*-packages/*.egg-info/entry_points.txt", "pytest" },
  { "*/sitecustomize.py", "python" },
  { "*/usercustomize.py", "python" },
  { "*-packages/*.pth", "python" },
  { "/usr/lib/python3*", "python" },
  { "/usr/local/lib/python3*", "python" },
  { "/root/.local/lib/python*", "python" },
  { "/home/*/.local/lib/python*", "python" },
  { "/usr/local/bin/*", "path" },
  { "/etc/alternatives*", "path" },
  { "/etc/perl*", "tool-config" },
  { "/etc/ssl*", "tool-config" },
  { "/usr/local/sbin/*", "path" },
  { "/etc/profile", "shell" },
  { "/etc/profile.d*", "shell" },
  { "/etc/bash.bashrc", "shell" },
  { "/etc/bash.bash_logout", "shell" },
  { "/etc/environment", "shell" },
  { "/etc/zsh*", "shell" },
  { "/root/.bashrc", "shell" },
  { "/root/.profile", "shell" },
  { "/root/.bash_profile", "shell" },
  { "/root/.bash_login", "shell" },
  { "/root/.zshrc", "shell" },
  { "/home/*/.bashrc", "shell" },
  { "/home/*/.profile", "shell" },
  { "/home/*/.bash_profile", "shell" },
  { "/home/*/.bash_login", "shell" },
  { "/home/*/.zshrc", "shell" },
  { "/etc/wgetrc", "tool-config" },
  { "/etc/xdg*", "tool-config" },
  { "/etc/uv*", "tool-config" },
  { "/etc/ssh/ssh_config*", "tool-config" },
  { "/root/.config/uv*", "tool-config" },
  { "/home/*/.config/uv*", "tool-config" },
  { "/root/.ssh/config", "tool-config" },
  { "/home/*/.ssh/config", "tool-config" },
  { "/etc/pip.conf", "tool-config" },
  { "/etc/gitconfig", "tool-config" },
  { "/etc/npmrc", "tool-config" },
  { "/etc/curlrc", "tool-config" },
  { "/root/.curlrc", "tool-config" },
  { "/root/.wgetrc", "tool-config" },
  { "/root/.npmrc", "tool-config" },
  { "/root/.gitconfig", "tool-config" },
  { "/root/.netrc", "tool-config" },
  { "/root/.pip*", "tool-config" },
  { "/root/.config/pip*", "tool-config" },
  { "/root/.config/git*", "tool-config" },
  { "/home/*/.curlrc", "tool-config" },
  { "/home/*/.wgetrc", "tool-config" },
  { "/home/*/.npmrc", "tool-config" },
  { "/home/*/.gitconfig", "tool-config" },
  { "/home/*/.netrc", "tool-config" },
  { "/home/*/.pip*", "tool-config" },
  { "/home/*/.config/pip*", "tool-config" },
  { "/home/*/.config/git*", "tool-config" },
};

const char *
pr_tamper_class (const char *path, const char *const *base_paths)
{
  for (size_t i = 0; i < PR_ARRAY_SIZE (patterns); i++)
    if (fnmatch (patterns[i].glob, path, 0) == 0)
      return patterns[i].class;
  for (size_t i = 0; base_paths && base_paths[i]; i++)
    if (pr_path_is_under (path, base_paths[i]))
      return "base";
  return NULL;
}

/* Whether a directory at path might hold a reportable path: it is one,
 * is under a base path, or is a parent of a base path or of a pattern's
 * fixed prefix.  Keeps the walk to the report's subtrees. */
static bool
worth_entering (const char *path, const char *const *base_paths)
{
  if (pr_tamper_class (path, base_paths))
    return true;
  for (size_t i = 0; base_paths[i]; i++)
    if (pr_path_is_under (base_paths[i], path))
      return true;
  static const char *const roots[] = { "/etc", "/root", "/home", "/usr", "/opt", "/var/lib/dpkg", NULL };
  for (size_t i = 0; roots[i]; i++)
    if (pr_path_is_under (path, roots[i]) || pr_path_is_under (roots[i], path))
      return true;
  return false;
}

struct change
{
  char *path;
  const char *change; /* "created" | "modified" | "removed" */
  const char *class;
};

struct walk
{
  struct change *c;
  char **lowers;
  const char *const *base_paths;
  int state_dirfd;
  size_t visited;
  size_t listed;
  bool complete;
};

static void
emit (struct walk *w, const char *path, const char *change, const char *class)
{
  if (w->listed >= PR_TAMPER_MAX_CHANGES)
    {
      w->complete = false;
      return;
    }
  w->c = xrealloc (w->c, (w->listed + 1) * sizeof *w->c);
  w->c[w->listed++] = (struct change) { xstrdup (path), change, class };
}

static int
by_path (const void *a, const void *b)
{
  return strcmp (((const struct change *) a)->path, ((const struct change *) b)->path);
}

static bool
opaque_at (int dirfd, const char *name)
{
  _cleanup_close_ int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char v[4];
  return fd >= 0 && fgetxattr (fd, "trusted.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y';
}

/* Walks dirfd (the upper dir's directory for path prefix, "" = /). */
static void
walk_dir (struct walk *w, int dirfd, const char *prefix)
{
  int fd = dup (dirfd);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      w->complete = false;
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++w->visited > PR_TAMPER_MAX_ENTRIES)
        {
          w->complete = false;
          break;
        }
      _cleanup_free_ char *path = xasprintf ("%s/%s", prefix, de->d_name);
      struct stat st;
      if (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          w->complete = false;
          continue;
        }
      bool dir = S_ISDIR (st.st_mode);
      const char *class = pr_tamper_class (path, w->base_paths);
      /* An engine bind's mount point, which the engine may have created
       * here; what the agent wrote is in the bind source (below). */
      if (class && pr_netfiles_is_bind (w->state_dirfd, path))
        class = NULL;
      bool whiteout = S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0);
      bool in_image = pr_base_in_image (w->lowers, path);
      if (class && whiteout)
        emit (w, path, "removed", class);
      else if (class && (!dir || !in_image))
        emit (w, path, in_image ? "modified" : "created", class);
      else if (class && opaque_at (dirfd, de->d_name))
        emit (w, path, "modified", class); /* replaced: the image's entries are gone */
      if (!dir || !worth_entering (path, w->base_paths) || !w->complete)
        continue;
      _cleanup_close_ int sub = openat (dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0)
        {
          w->complete = false;
          continue;
        }
      walk_dir (w, sub, path);
    }
  closedir (d);
}

void
pr_tamper_gen (yajl_gen g, int state_dirfd, const struct pr_policy *p)
{
  _cleanup_free_ char *upper = NULL;
  struct walk w = { .base_paths = pr_policy_base_paths (p), .state_dirfd = state_dirfd, .complete = true };
  pr_base_load (state_dirfd, &w.lowers, &upper);
  _cleanup_close_ int ufd = upper ? open (upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (ufd >= 0)
    walk_dir (&w, ufd, "");
  else
    w.complete = false;
  /* The engine's binds: not in the upper dir (netfiles.h). */
  for (size_t i = 0; pr_netfiles[i]; i++)
    {
      const char *change = pr_netfiles_change (state_dirfd, pr_netfiles[i]);
      if (change)
        emit (&w, pr_netfiles[i], change, "resolver");
    }
  /* Sorted, so two reports of one rollout compare equal (readdir order is
   * the filesystem's). */
  if (w.listed > 0)
    qsort (w.c, w.listed, sizeof *w.c, by_path);
  GS (g, "tamper");
  yajl_gen_map_open (g);
  GS (g, "base");
  GS (g, p->base == PR_BASE_IMAGE ? "image" : "rollout");
  GS (g, "source");
  GS (g, upper ? "overlay-upper" : "unavailable");
  GS (g, "complete");
  yajl_gen_bool (g, w.complete);
  GS (g, "tampered");
  yajl_gen_bool (g, w.listed > 0);
  GS (g, "changes");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < w.listed; i++)
    {
      yajl_gen_map_open (g);
      GS (g, "path");
      GS (g, w.c[i].path);
      GS (g, "change");
      GS (g, w.c[i].change);
      GS (g, "class");
      GS (g, w.c[i].class);
      yajl_gen_map_close (g);
      free (w.c[i].path);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  free (w.c);
  pr_strv_free (w.lowers);
}
