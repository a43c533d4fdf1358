/* base.c - the verifier's base: overlay layers recorded at create, the
 * image's view of a path, the verifier's image-base mounts (see base.h). */
#define _GNU_SOURCE
#include "base.h"
#include "passwd.h"
#include "verifier.h"
#include "../base/syscall.h"
#include "../base/util.h"
#include "../linux/safepath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* mountinfo's octal escapes (\040 for ' ' ...), in place. */
static void
unescape_octal (char *s)
{
  char *w = s;
  for (char *q = s; *q; q++)
    {
      if (q[0] == '\\' && q[1] >= '0' && q[1] <= '3' && q[2] >= '0' && q[2] <= '7' && q[3] >= '0' && q[3] <= '7')
        {
          *w++ = (char) ((q[1] - '0') * 64 + (q[2] - '0') * 8 + (q[3] - '0'));
          q += 3;
        }
      else
        *w++ = *q;
    }
  *w = '\0';
}

/* The value of key= in a comma-separated option string (a copy), or NULL.
 * overlayfs escapes ',' in its paths (seq_show_option), so a plain split
 * on ',' is right. */
static char *
option (const char *opts, const char *key)
{
  size_t kl = strlen (key);
  for (const char *o = opts; o && *o;)
    {
      size_t n = strcspn (o, ",");
      if (n > kl && strncmp (o, key, kl) == 0 && o[kl] == '=')
        return strndup (o + kl + 1, n - kl - 1);
      o += n + (o[n] == ',');
    }
  return NULL;
}

/* Finds the last mount at mnt (stacked mounts: the top one is the one
 * seen) and returns its fstype and super options (malloc'd). */
static int
find_mount (const char *mnt, char **fstype, char **opts, pr_error **err)
{
  _cleanup_fclose_ FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    return pr_error_set (err, errno, "open /proc/self/mountinfo");
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  *fstype = *opts = NULL;
  while (getline (&line, &cap, f) > 0)
    {
      line[strcspn (line, "\n")] = '\0';
      char *sep = strstr (line, " - ");
      if (sep == NULL)
        continue;
      *sep = '\0';
      char *save = NULL, *field = strtok_r (line, " ", &save);
      for (int i = 0; field && i < 4; i++)
        field = strtok_r (NULL, " ", &save);
      if (field == NULL)
        continue;
      unescape_octal (field);
      if (strcmp (field, mnt) != 0)
        continue;
      char *save2 = NULL, *fs = strtok_r (sep + 3, " ", &save2);
      char *src = fs ? strtok_r (NULL, " ", &save2) : NULL;
      char *sopts = src ? strtok_r (NULL, " ", &save2) : NULL;
      free (*fstype);
      free (*opts);
      *fstype = xstrdup (fs ? fs : "");
      *opts = xstrdup (sopts ? sopts : "");
    }
  return 0;
}

/* lowerdir's value split on unescaped ':' ("::" separates data-only
 * layers, which hold no names: they are left out), each unescaped. */
static char **
split_lowers (const char *val)
{
  char **out = xmalloc0 (sizeof (char *));
  _cleanup_free_ char *cur = xmalloc0 (strlen (val) + 1);
  size_t n = 0;
  for (const char *q = val;; q++)
    {
      if (*q == '\\' && q[1] == ':')
        {
          cur[n++] = ':';
          q++;
          continue;
        }
      if (*q == ':' || *q == '\0')
        {
          cur[n] = '\0';
          if (n > 0)
            {
              unescape_octal (cur);
              out = pr_strv_append (out, cur);
            }
          n = 0;
          if (*q == '\0' || (q[0] == ':' && q[1] == ':'))
            break;
          continue;
        }
      cur[n++] = *q;
    }
  return out;
}

int
pr_base_record (const char *rootfs, const struct pr_policy *p, int state_dirfd, pr_error **err)
{
  char real[PATH_MAX];
  if (realpath (rootfs, real) == NULL)
    return pr_error_set (err, errno, "resolve rootfs `%s`", rootfs);
  _cleanup_free_ char *fstype = NULL, *opts = NULL, *lower = NULL, *upper = NULL;
  if (find_mount (real, &fstype, &opts, err) < 0)
    return -1;
  if (fstype && strcmp (fstype, "overlay") == 0)
    {
      lower = option (opts, "lowerdir");
      upper = option (opts, "upperdir");
    }
  if (lower == NULL)
    {
      if (p->base == PR_BASE_IMAGE)
        return pr_error_invalid (err,
                                 "rollout policy: verifier.base: \"image\" needs an overlay rootfs (podman, docker, "
                                 "containerd give one); `%s` is %s%s, which keeps no record of the image",
                                 rootfs, fstype ? "a mount of type " : "a plain directory", fstype ? fstype : "");
      return 0;
    }
  _cleanup_strv_ char **lowers = split_lowers (lower);
  size_t len = 0;
  for (size_t i = 0; lowers[i]; i++)
    len += strlen (lowers[i]) + 1;
  _cleanup_free_ char *buf = xmalloc0 (len + 1);
  size_t off = 0;
  for (size_t i = 0; lowers[i]; i++)
    {
      size_t l = strlen (lowers[i]) + 1;
      memcpy (buf + off, lowers[i], l);
      off += l;
    }
  if (pr_write_file_at (state_dirfd, PR_BASE_LOWER_FILE, buf, off, 0600, err) < 0)
    return -1;
  if (upper)
    {
      unescape_octal (upper);
      if (pr_write_file_at (state_dirfd, PR_BASE_UPPER_FILE, upper, strlen (upper), 0600, err) < 0)
        return -1;
    }
  return 0;
}

void
pr_base_load (int state_dirfd, char ***lowers, char **upper)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  *lowers = NULL;
  *upper = NULL;
  if (pr_read_file_at (state_dirfd, PR_BASE_LOWER_FILE, &text, &len, NULL) == 0 && text)
    {
      char **out = xmalloc0 (sizeof (char *));
      for (size_t off = 0; off < len; off += strlen (text + off) + 1)
        if (text[off])
          out = pr_strv_append (out, text + off);
      *lowers = out;
    }
  if (pr_read_file_at (state_dirfd, PR_BASE_UPPER_FILE, upper, NULL, NULL) < 0)
    *upper = NULL;
}

static bool
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

static bool
is_opaque (const char *path)
{
  char v[4];
  ssize_t n = lgetxattr (path, "trusted.overlay.opaque", v, sizeof v);
  return n == 1 && v[0] == 'y';
}

/* How a parent of path in one layer bears on the layers below:
 * 0 a directory (or absent), 1 an opaque directory (this layer counts,
 * the ones below do not), 2 a whiteout or non-directory (neither). */
static int
parent_state (const char *layer, const char *path)
{
  int state = 0;
  _cleanup_free_ char *copy = xstrdup (path);
  for (char *slash = strchr (copy + 1, '/'); slash; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      _cleanup_free_ char *pp = xasprintf ("%s%s", layer, copy);
      *slash = '/';
      struct stat ps;
      if (lstat (pp, &ps) < 0)
        continue;
      if (!S_ISDIR (ps.st_mode))
        return 2;
      if (is_opaque (pp))
        state = 1;
    }
  return state;
}

/* The layers (top first) that make up path in the image: a directory
 * gives each layer where it is a directory, down to an opaque one; a
 * non-directory gives the one layer it comes from.  *kind: 0 absent,
 * 'd' directory, 'f' anything else (from the top layer that has it). */
static char **
image_layers (char *const *lowers, const char *path, char *kind)
{
  char **out = xmalloc0 (sizeof (char *));
  *kind = 0;
  for (size_t i = 0; lowers && lowers[i]; i++)
    {
      int ps = parent_state (lowers[i], path);
      if (ps == 2)
        break;
      _cleanup_free_ char *lp = xasprintf ("%s%s", lowers[i], path);
      struct stat st;
      if (lstat (lp, &st) == 0)
        {
          if (is_whiteout (&st))
            break;
          if (!S_ISDIR (st.st_mode))
            {
              if (*kind == 0)
                {
                  *kind = 'f';
                  out = pr_strv_append (out, lp);
                }
              break;
            }
          *kind = 'd';
          out = pr_strv_append (out, lp);
          if (is_opaque (lp))
            break;
        }
      if (ps == 1)
        break;
    }
  return out;
}

bool
pr_base_in_image (char *const *lowers, const char *path)
{
  char kind;
  _cleanup_strv_ char **l = image_layers (lowers, path, &kind);
  return kind != 0;
}

/* A fresh detached tmpfs (nosuid, nodev) and an fd of its root. */
static int
private_tmpfs (int *mnt, int *dir, pr_error **err)
{
  _cleanup_close_ int fs = pr_sys_fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return pr_error_set (err, errno, "fsopen tmpfs");
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return pr_error_set (err, errno, "create a tmpfs for the verifier's base");
  *mnt = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (*mnt < 0)
    return pr_error_set (err, errno, "fsmount a tmpfs for the verifier's base");
  *dir = openat (*mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (*dir < 0)
    {
      close (*mnt);
      return pr_error_set (err, errno, "open a tmpfs for the verifier's base");
    }
  return 0;
}

/* The image's directory (layers, top first) under a private tmpfs upper,
 * as one detached overlay mount. */
static int
dir_mount (char *const *layers, const char *path, int *out, pr_error **err)
{
  _cleanup_close_ int tm = -1, td = -1;
  if (private_tmpfs (&tm, &td, err) < 0)
    return -1;
  struct stat top;
  if (stat (layers[0], &top) < 0)
    return pr_error_set (err, errno, "stat the image's `%s`", path);
  if (mkdirat (td, "u", 0755) < 0 || mkdirat (td, "w", 0700) < 0
      || fchownat (td, "u", top.st_uid, top.st_gid, 0) < 0 || fchmodat (td, "u", top.st_mode & 07777, 0) < 0)
    return pr_error_set (err, errno, "prepare the verifier's private layer for `%s`", path);
  _cleanup_close_ int u = openat (td, "u", O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_close_ int w = openat (td, "w", O_PATH | O_DIRECTORY | O_CLOEXEC);
  _cleanup_close_ int fs = pr_sys_fsopen ("overlay", FSOPEN_CLOEXEC);
  if (u < 0 || w < 0 || fs < 0)
    return pr_error_set (err, errno, "open the overlay for the image's `%s`", path);
  for (size_t i = 0; layers[i]; i++)
    if (pr_sys_fsconfig (fs, FSCONFIG_SET_STRING, "lowerdir+", layers[i], 0) < 0)
      return pr_error_set (err, errno, "overlay lowerdir+ `%s`", layers[i]);
  if (pr_sys_fsconfig (fs, FSCONFIG_SET_FD, "upperdir", NULL, u) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_SET_FD, "workdir", NULL, w) < 0
      || pr_sys_fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return pr_error_set (err, errno, "create the overlay of the image's `%s`", path);
  *out = pr_sys_fsmount (fs, FSMOUNT_CLOEXEC, 0);
  if (*out < 0)
    return pr_error_set (err, errno, "fsmount the overlay of the image's `%s`", path);
  return 0;
}

/* A detached mount of a private file with st's mode and owner holding buf
 * (len bytes), then what in (an fd, -1: none) has left to read; path is
 * for errors. */
static int
private_file_mount (const struct stat *st, const char *buf, size_t len, int in, const char *path, int *out,
                    pr_error **err)
{
  _cleanup_close_ int tm = -1, td = -1;
  if (private_tmpfs (&tm, &td, err) < 0)
    return -1;
  _cleanup_close_ int o = openat (td, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, st->st_mode & 07777);
  if (o < 0 || fchown (o, st->st_uid, st->st_gid) < 0 || pr_write_all (o, buf, len) < 0)
    return pr_error_set (err, errno, "copy `%s` for the verifier", path);
  char chunk[65536];
  ssize_t n;
  while (in >= 0 && (n = read (in, chunk, sizeof chunk)) > 0)
    if (pr_write_all (o, chunk, (size_t) n) < 0)
      return pr_error_set (err, errno, "copy `%s` for the verifier", path);
  *out = pr_sys_open_tree (td, "f", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (*out < 0)
    return pr_error_set (err, errno, "clone the copy of `%s` for the verifier", path);
  return 0;
}

int
pr_base_file_mount (int dirfd, const char *name, const char *path, int *out, pr_error **err)
{
  struct stat st = { .st_mode = S_IFREG | 0644 };
  _cleanup_close_ int in = name ? openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (name && (in < 0 || fstat (in, &st) < 0))
    return pr_error_set (err, errno, "open the saved `%s`", path);
  return private_file_mount (&st, NULL, 0, in, path, out, err);
}

static int
file_mount (const char *src, const char *path, int *out, pr_error **err)
{
  return pr_base_file_mount (AT_FDCWD, src, path, out, err);
}

/* A symlink's target resolved against its own directory (path inside the
 * container, normalised lexically; at most one level). */
static char *
resolve_link (const char *link, const char *path)
{
  char buf[PATH_MAX];
  ssize_t n = readlink (link, buf, sizeof buf - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  _cleanup_free_ char *dir = xstrdup (path);
  *strrchr (dir, '/') = '\0';
  _cleanup_free_ char *joined = buf[0] == '/' ? xstrdup (buf) : xasprintf ("%s/%s", dir, buf);
  /* Lexical clean-up of "." and ".." components. */
  char *res = xmalloc0 (strlen (joined) + 2);
  char *save = NULL;
  for (char *c = strtok_r (joined, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          char *s = strrchr (res, '/');
          if (s)
            *s = '\0';
          continue;
        }
      strcat (res, "/");
      strcat (res, c);
    }
  if (res[0] == '\0')
    strcpy (res, "/");
  return res;
}

/* An O_PATH fd of path inside the live rootfs, resolved as the container
 * would (RESOLVE_IN_ROOT: an agent's symlink never leads onto the host),
 * the last component not followed; -1 when absent. */
static int
open_live (const char *rootfs, const char *path)
{
  _cleanup_close_ int root = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return pr_sys_openat2 (root, path, &how, sizeof how);
}

static bool
same_link (int live_fd, const char *image_link)
{
  char x[PATH_MAX], y[PATH_MAX];
  ssize_t n = readlinkat (live_fd, "", x, sizeof x - 1), m = readlink (image_link, y, sizeof y - 1);
  return n > 0 && n == m && memcmp (x, y, (size_t) n) == 0;
}

static int
add_one (char *const *lowers, const char *rootfs, const char *path, struct pr_verifier_view *v, pr_error **err)
{
  char kind;
  _cleanup_strv_ char **layers = image_layers (lowers, path, &kind);
  _cleanup_close_ int live = open_live (rootfs, path);
  struct stat ls, is;
  bool live_has = live >= 0 && fstat (live, &ls) == 0;
  int fd = -1;
  if (kind == 0)
    {
      /* The image has nothing there: hide what the agent put there. */
      if (!live_has)
        return 0;
      if (S_ISDIR (ls.st_mode))
        {
          pr_verifier_view_add (v, path, -1, true);
          return 0;
        }
      if (file_mount (NULL, path, &fd, err) < 0)
        return -1;
      pr_verifier_view_add (v, path, fd, false);
      return 0;
    }
  if (kind == 'd')
    {
      if (dir_mount (layers, path, &fd, err) < 0)
        return -1;
      pr_verifier_view_add (v, path, fd, true);
      return 0;
    }
  if (lstat (layers[0], &is) == 0 && S_ISLNK (is.st_mode))
    {
      /* /bin -> usr/bin: the live link untouched leads into another base
       * path; a link the agent changed, or a directory it put in its
       * place, is covered by what the image's link pointed to. */
      if (live_has && S_ISLNK (ls.st_mode) && same_link (live, layers[0]))
        return 0;
      _cleanup_free_ char *to = resolve_link (layers[0], path);
      char k2;
      _cleanup_strv_ char **l2 = to ? image_layers (lowers, to, &k2) : NULL;
      if (l2 == NULL || k2 != 'd')
        return 0;
      if (dir_mount (l2, to, &fd, err) < 0)
        return -1;
      pr_verifier_view_add (v, path, fd, true);
      return 0;
    }
  if (file_mount (layers[0], path, &fd, err) < 0)
    return -1;
  pr_verifier_view_add (v, path, fd, false);
  return 0;
}

/* Injection points outside the usual base paths that `image` also shows
 * as the image had them (SPEC section 2: a verifier's tools read them):
 * shell startup files, python's /etc config, tool config, the
 * alternatives links, openssl's and perl's /etc, pytest's top-level
 * config and conftest.  Home-relative ones are applied to /root
 * and each /home/<user> of the image and of the live rootfs. */
static const char *const fixed_points[] = {
  "/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bash.bash_logout", "/etc/environment",
  "/etc/pip.conf", "/etc/wgetrc", "/etc/gitconfig", "/etc/npmrc", "/etc/curlrc",
  /* Links in the base paths that point out of them: /usr/bin/which, awk,
   * pager, cc, java... into /etc/alternatives; openssl's config
   * (/usr/lib/ssl/openssl.cnf -> /etc/ssl) names provider modules to load;
   * Debian's perl searches /etc/perl before /usr (an attacker's
   * strict.pm there runs in every perl the verifier starts). */
  "/etc/alternatives", "/etc/ssl", "/etc/perl",
  /* Name resolution's own config: nsswitch.conf names the NSS modules
   * every lookup loads (a `hosts: dns` line sends localhost to the
   * resolver), host.conf and gai.conf order addresses.  PAM's: a
   * `pam_exec.so` line in /etc/pam.d runs a program as root in every
   * su or runuser of the verifier, /etc/security/pam_env.conf sets
   * RES_OPTIONS or HOSTALIASES there (an attacker's trial of
   * 2026-12-04). */
  "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf", "/etc/pam.conf", "/etc/pam.d", "/etc/security",
  /* su's and runuser's own config (util-linux reads login.defs, then
   * /etc/default/su or runuser): `ALWAYS_SET_PATH yes` with an ENV_PATH
   * or ENV_SUPATH of the agent's makes the verifier's `runuser -u USER
   * CMD` run the agent's CMD; pam_env in su's stack reads
   * /etc/default/locale; sudo.conf names the plugins sudo loads, sudoers
   * its secure_path and env_keep (an attacker's trial of 2026-12-04). */
  "/etc/login.defs", "/etc/default/su", "/etc/default/runuser", "/etc/default/locale", "/etc/sudo.conf",
  "/etc/sudoers", "/etc/sudoers.d",
  /* The package tools' config and database: a `pre-invoke` in
   * /etc/dpkg/dpkg.cfg.d or an `APT::Update::Pre-Invoke` in
   * /etc/apt/apt.conf.d runs a program as root in the verifier's dpkg or
   * apt-get, and a package the agent installed brings maintainer scripts
   * in /var/lib/dpkg/info that the verifier's `dpkg -i` of a newer version
   * runs (an attacker's trial of 2026-12-04).  The image's database also
   * matches the image's /usr the verifier sees. */
  "/etc/apt", "/etc/dpkg", "/var/lib/dpkg",
  /* Other tools' system config (the same trial, not tried: the image had
   * none of these): pip also reads /etc/xdg/pip/pip.conf (find-links and
   * no-index install the agent's wheel), uv /etc/uv/uv.toml and
   * /etc/xdg/uv, ssh a ProxyCommand in ssh_config. */
  "/etc/xdg", "/etc/uv", "/etc/ssh/ssh_config", "/etc/ssh/ssh_config.d",
  "/conftest.py", "/pytest.ini", "/.pytest.ini", "/tox.ini", "/setup.cfg", "/pyproject.toml", NULL,
};
static const char *const home_points[] = {
  ".bashrc", ".profile", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc",
  ".curlrc", ".wgetrc", ".npmrc", ".gitconfig", ".netrc", ".pip", ".config/pip", ".config/git", ".local/lib",
  ".config/uv", ".ssh/config",
  "conftest.py", NULL,
};

/* Names in dir (a host path) that start with prefix, appended to *out as
 * parent/NAME. */
static void
list_prefixed (const char *dir, const char *parent, const char *prefix, char ***out)
{
  _cleanup_close_ int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  if (d == NULL)
    return;
  fd = -1;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.' && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
        continue;
      if (strncmp (de->d_name, prefix, strlen (prefix)) != 0)
        continue;
      _cleanup_free_ char *path = xasprintf ("%s/%s", parent, de->d_name);
      bool seen = false;
      for (size_t i = 0; (*out)[i]; i++)
        seen = seen || strcmp ((*out)[i], path) == 0;
      if (!seen)
        *out = pr_strv_append (*out, path);
    }
  closedir (d);
}

/* The concrete injection points: fixed_points, /etc/python3* (the
 * interpreter's sitecustomize lives there on Debian), and home_points in
 * each home of the image's top layer... and of the live rootfs. */
static char **
injection_points (char *const *lowers, const char *rootfs)
{
  char **out = xmalloc0 (sizeof (char *));
  for (size_t i = 0; fixed_points[i]; i++)
    out = pr_strv_append (out, fixed_points[i]);
  _cleanup_strv_ char **homes = xmalloc0 (sizeof (char *));
  homes = pr_strv_append (homes, "/root");
  _cleanup_free_ char *le = xasprintf ("%s/etc", rootfs), *lh = xasprintf ("%s/home", rootfs);
  list_prefixed (le, "/etc", "python3", &out);
  list_prefixed (lh, "/home", "", &homes);
  for (size_t i = 0; lowers && lowers[i]; i++)
    {
      _cleanup_free_ char *e = xasprintf ("%s/etc", lowers[i]), *h = xasprintf ("%s/home", lowers[i]);
      list_prefixed (e, "/etc", "python3", &out);
      list_prefixed (h, "/home", "", &homes);
    }
  for (size_t i = 0; homes[i]; i++)
    for (size_t j = 0; home_points[j]; j++)
      {
        _cleanup_free_ char *p = xasprintf ("%s/%s", homes[i], home_points[j]);
        out = pr_strv_append (out, p);
      }
  return out;
}

/* Reads a regular file of at most PR_PASSWD_MAX bytes from fd (closed),
 * or NULL. */
static char *
read_small (int fd, size_t *len)
{
  _cleanup_close_ int f = fd;
  char *buf = NULL;
  struct stat st;
  if (f < 0 || pr_read_regular (f, PR_PASSWD_MAX, &buf, len, &st) < 0)
    return NULL;
  return buf;
}

/* /etc/passwd for the verifier (passwd.h): the live file, resolved in the
 * container's root as su would, with each image user's home and shell as
 * the image's top layer holding the file has them; the image's file alone
 * when the live one is unreadable, not a regular file or oversized.  An
 * image without a regular /etc/passwd leaves the live one in place: that
 * depends on the image only. */
static int
passwd_view (char *const *lowers, const char *rootfs, struct pr_verifier_view *v, pr_error **err)
{
  char kind;
  _cleanup_strv_ char **layers = image_layers (lowers, "/etc/passwd", &kind);
  struct stat ist;
  if (kind != 'f' || lstat (layers[0], &ist) < 0 || !S_ISREG (ist.st_mode))
    return 0;
  size_t ilen = 0, llen = 0, mlen = 0;
  _cleanup_free_ char *image = read_small (open (layers[0], O_RDONLY | O_NOFOLLOW | O_CLOEXEC), &ilen);
  if (image == NULL)
    return 0;
  _cleanup_close_ int root = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int lfd = -1;
  _cleanup_error_ pr_error *ignored = NULL;
  if (root < 0 || pr_safe_open (root, "/etc/passwd", O_RDONLY | O_NONBLOCK, 0, &lfd, &ignored) < 0)
    lfd = -1;
  _cleanup_free_ char *live = read_small (lfd, &llen);
  _cleanup_free_ char *merged = live ? pr_passwd_merge_login (live, llen, image, ilen, &mlen)
                                     : pr_passwd_merge_login (image, ilen, image, ilen, &mlen);
  int fd = -1;
  if (private_file_mount (&ist, merged, mlen, -1, "/etc/passwd", &fd, err) < 0)
    return -1;
  pr_verifier_view_add (v, "/etc/passwd", fd, false);
  return 0;
}

/* Whether path is one of the policy's base paths or under one (the base
 * path's own view covers it). */
static bool
under_base_path (const struct pr_policy *p, const char *path)
{
  for (const char *const *bp = pr_policy_base_paths (p); *bp; bp++)
    if (pr_path_is_under (path, *bp))
      return true;
  return false;
}

int
pr_base_view_add (int state_dirfd, const char *rootfs, const struct pr_policy *p, struct pr_verifier_view *v,
                  pr_error **err)
{
  _cleanup_strv_ char **lowers = NULL;
  _cleanup_free_ char *upper = NULL;
  pr_base_load (state_dirfd, &lowers, &upper);
  if (lowers == NULL || lowers[0] == NULL)
    return pr_error_invalid (err, "verifier.base \"image\": no image layers were recorded at create");
  for (const char *const *bp = pr_policy_base_paths (p); *bp; bp++)
    if (add_one (lowers, rootfs, *bp, v, err) < 0)
      return -1;
  _cleanup_strv_ char **points = injection_points (lowers, rootfs);
  for (size_t i = 0; points[i]; i++)
    if (!under_base_path (p, points[i]) && add_one (lowers, rootfs, points[i], v, err) < 0)
      return -1;
  return under_base_path (p, "/etc/passwd") ? 0 : passwd_view (lowers, rootfs, v, err);
}
