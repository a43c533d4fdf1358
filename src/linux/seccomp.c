/* seccomp.c - owns translation of linux.seccomp into a libseccomp filter,
 * loading it, and handing the SCMP_ACT_NOTIFY listener fd to the
 * listenerPath agent.  The same builder serves validation at create time
 * and the real load in the container process, so what validates loads. */
#define _GNU_SOURCE
#include "seccomp.h"

#include "../base/log.h"
#include "../base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

static void
scmp_releasep (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
}
#define _cleanup_scmp_ __attribute__ ((cleanup (scmp_releasep)))

/* runtime-spec: errnoRet defaults to EPERM when absent. */
static int
resolve_action (const char *name, bool has_errno_ret, uint32_t errno_ret, uint32_t *out, pr_error **err)
{
  uint32_t ret = has_errno_ret ? errno_ret : EPERM;

  if (name == NULL)
    return pr_error_invalid (err, "seccomp: missing action");
  if (strcmp (name, "SCMP_ACT_KILL") == 0 || strcmp (name, "SCMP_ACT_KILL_THREAD") == 0)
    *out = SCMP_ACT_KILL_THREAD;
  else if (strcmp (name, "SCMP_ACT_KILL_PROCESS") == 0)
    *out = SCMP_ACT_KILL_PROCESS;
  else if (strcmp (name, "SCMP_ACT_TRAP") == 0)
    *out = SCMP_ACT_TRAP;
  else if (strcmp (name, "SCMP_ACT_ERRNO") == 0)
    *out = SCMP_ACT_ERRNO (ret);
  else if (strcmp (name, "SCMP_ACT_TRACE") == 0)
    *out = SCMP_ACT_TRACE (ret);
  else if (strcmp (name, "SCMP_ACT_ALLOW") == 0)
    *out = SCMP_ACT_ALLOW;
  else if (strcmp (name, "SCMP_ACT_LOG") == 0)
    *out = SCMP_ACT_LOG;
  else if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    *out = SCMP_ACT_NOTIFY;
  else
    return pr_error_invalid (err, "seccomp: unknown action `%s`", name);
  return 0;
}

static int
resolve_op (const char *name, enum scmp_compare *out, pr_error **err)
{
  static const struct
  {
    const char *name;
    enum scmp_compare op;
  } ops[] = {
    { "SCMP_CMP_NE", SCMP_CMP_NE },       { "SCMP_CMP_LT", SCMP_CMP_LT },
    { "SCMP_CMP_LE", SCMP_CMP_LE },       { "SCMP_CMP_EQ", SCMP_CMP_EQ },
    { "SCMP_CMP_GE", SCMP_CMP_GE },       { "SCMP_CMP_GT", SCMP_CMP_GT },
    { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
  };

  for (size_t i = 0; name && i < PR_ARRAY_SIZE (ops); i++)
    if (strcmp (name, ops[i].name) == 0)
      {
        *out = ops[i].op;
        return 0;
      }
  return pr_error_invalid (err, "seccomp: unknown operator `%s`", name ? name : "");
}

/* "SCMP_ARCH_X86_64" -> libseccomp's "x86_64"; libseccomp's own name table
 * then covers every architecture it supports. */
static int
resolve_arch (const char *name, uint32_t *out, pr_error **err)
{
  const char prefix[] = "SCMP_ARCH_";
  char lower[32];
  size_t i;

  if (strncmp (name, prefix, sizeof prefix - 1) != 0 || strlen (name) - (sizeof prefix - 1) >= sizeof lower)
    return pr_error_invalid (err, "seccomp: unknown architecture `%s`", name);
  for (i = 0; name[sizeof prefix - 1 + i]; i++)
    lower[i] = tolower ((unsigned char) name[sizeof prefix - 1 + i]);
  lower[i] = '\0';
  /* NATIVE resolves to 0, which is also the failure value. */
  *out = seccomp_arch_resolve_name (lower);
  if (*out == 0)
    return pr_error_invalid (err, "seccomp: unknown architecture `%s`", name);
  return 0;
}

static int
apply_flag (scmp_filter_ctx ctx, const char *name, pr_error **err)
{
  enum scmp_filter_attr attr;
  int rc;

  if (strcmp (name, "SECCOMP_FILTER_FLAG_TSYNC") == 0)
    attr = SCMP_FLTATR_CTL_TSYNC;
  else if (strcmp (name, "SECCOMP_FILTER_FLAG_LOG") == 0)
    attr = SCMP_FLTATR_CTL_LOG;
  else if (strcmp (name, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0)
    attr = SCMP_FLTATR_CTL_SSB;
  else if (strcmp (name, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0)
    {
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
      attr = SCMP_FLTATR_CTL_WAITKILL;
#else
      /* Only changes how a notified syscall reacts to signals; the filter
       * is as strict without it. */
      pr_warn ("seccomp flag `%s` is not supported by this libseccomp, ignored", name);
      return 0;
#endif
    }
  else
    return pr_error_invalid (err, "seccomp: unknown flag `%s`", name);

  rc = seccomp_attr_set (ctx, attr, 1);
  if (rc < 0)
    return pr_error_set (err, -rc, "seccomp: set flag `%s`", name);
  return 0;
}

static bool
args_repeat_index (const struct pr_seccomp_syscall *s)
{
  for (size_t i = 0; i < s->n_args; i++)
    for (size_t j = i + 1; j < s->n_args; j++)
      if (s->args[i].index == s->args[j].index)
        return true;
  return false;
}

static int
add_syscall_rules (scmp_filter_ctx ctx, const struct pr_seccomp_syscall *s, uint32_t action,
                   const struct scmp_arg_cmp *conds, pr_error **err)
{
  /* libseccomp refuses two conditions on one argument in a rule; the
   * established reading (runc's) of such a config is "any of them", i.e.
   * one rule per condition. */
  bool split = args_repeat_index (s);

  for (char **n = s->names; n && *n; n++)
    {
      int nr = seccomp_syscall_resolve_name (*n);
      int rc = 0;

      if (nr == __NR_SCMP_ERROR)
        {
          pr_debug ("seccomp: unknown syscall `%s`, skipped", *n);
          continue;
        }
      if (split)
        for (size_t i = 0; i < s->n_args && rc >= 0; i++)
          rc = seccomp_rule_add_array (ctx, action, nr, 1, &conds[i]);
      else
        rc = seccomp_rule_add_array (ctx, action, nr, (unsigned) s->n_args, conds);
      if (rc < 0)
        return pr_error_set (err, -rc, "seccomp: add rule for syscall `%s`", *n);
    }
  return 0;
}

static int
add_syscall (scmp_filter_ctx ctx, const struct pr_seccomp_syscall *s, uint32_t default_action,
             bool *uses_notify, pr_error **err)
{
  _cleanup_free_ struct scmp_arg_cmp *conds = NULL;
  uint32_t action;

  if (resolve_action (s->action, s->has_errno_ret, s->errno_ret, &action, err) < 0)
    return -1;

  conds = xmalloc0 ((s->n_args + 1) * sizeof *conds);
  for (size_t i = 0; i < s->n_args; i++)
    {
      const struct pr_seccomp_arg *a = &s->args[i];
      enum scmp_compare op = SCMP_CMP_EQ;

      if (resolve_op (a->op, &op, err) < 0)
        return -1;
      if (a->index > 5)
        return pr_error_invalid (err, "seccomp: argument index %u out of range (0-5)", a->index);
      conds[i].arg = a->index;
      conds[i].op = op;
      /* runtime-spec/libseccomp: for MASKED_EQ value is the mask and
       * valueTwo the value compared after masking. */
      conds[i].datum_a = a->value;
      conds[i].datum_b = a->value_two;
    }

  if (action == default_action)
    {
      pr_debug ("seccomp: rule `%s` equals the default action, skipped", s->action);
      return 0;
    }
  if (action == SCMP_ACT_NOTIFY)
    *uses_notify = true;
  return add_syscall_rules (ctx, s, action, conds, err);
}

/* The highest native syscall number that the profile names and this
 * libseccomp resolves, or -1 when it names none. */
static int
highest_known_syscall (const struct pr_seccomp *sc)
{
  int max = -1;

  for (size_t i = 0; i < sc->n_syscalls; i++)
    for (char **n = sc->syscalls[i].names; n && *n; n++)
      {
        int nr = seccomp_syscall_resolve_name (*n);
        if (nr != __NR_SCMP_ERROR && nr > max)
          max = nr;
      }
  return max;
}

/* A syscall newer than the profile (a number above every one it names)
 * is one its author could not decide on: it fails with ENOSYS, so that
 * libc falls back to the older call (clone3 -> clone, openat2 -> openat,
 * faccessat2 -> faccessat) instead of taking the default errno (EPERM)
 * as a hard failure.  A syscall the profile knew and left to the default
 * keeps the default.  runc does the same by patching the filter's BPF; the
 * rules here cover the native architecture's numbers up to
 * PR_SECCOMP_ENOSYS_CEILING (the x86_64 and aarch64 tables end below 500
 * in 2026); a compat architecture (x86 on x86_64) keeps the default, since
 * libseccomp takes raw numbers only in the native table.  Only when the default is a
 * denial: with an allowing default there is nothing to fall back from. */
#define PR_SECCOMP_ENOSYS_CEILING 1024
static int
add_enosys_above_known (scmp_filter_ctx ctx, const struct pr_seccomp *sc, uint32_t default_action, pr_error **err)
{
  int max = highest_known_syscall (sc);

  if (max < 0 || default_action == SCMP_ACT_ALLOW || default_action == SCMP_ACT_LOG
      || default_action == SCMP_ACT_ERRNO (ENOSYS))
    return 0;
  for (int nr = max + 1; nr < PR_SECCOMP_ENOSYS_CEILING; nr++)
    {
      int rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), nr, 0);
      /* A number this libseccomp refuses is left to the default. */
      if (rc < 0 && rc != -EDOM && rc != -EINVAL && rc != -EEXIST && rc != -EFAULT)
        return pr_error_set (err, -rc, "seccomp: ENOSYS rule for syscall number %d", nr);
    }
  return 0;
}

/* Builds one part of the filter into *out: native (the native
 * architecture, with the ENOSYS rules, whose raw numbers are the native
 * table's) or the profile's other architectures (*out NULL when it names
 * none).  Rules by name are translated to each architecture. */
static int
build_part (const struct pr_seccomp *sc, uint32_t default_action, bool native, scmp_filter_ctx *out,
            bool *uses_notify, pr_error **err)
{
  _cleanup_scmp_ scmp_filter_ctx ctx = seccomp_init (default_action);
  size_t n_arches = 0;
  int rc;

  *out = NULL;
  if (ctx == NULL)
    return pr_error_invalid (err, "seccomp: init filter with default action `%s`", sc->default_action);
  for (char **a = sc->architectures; a && *a; a++)
    {
      uint32_t arch;
      if (resolve_arch (*a, &arch, err) < 0)
        return -1;
      if (native || arch == seccomp_arch_native ())
        continue;
      rc = seccomp_arch_add (ctx, arch);
      if (rc < 0 && rc != -EEXIST)
        return pr_error_set (err, -rc, "seccomp: add architecture `%s`", *a);
      n_arches++;
    }
  if (!native && n_arches == 0)
    return 0;
  if (!native && (rc = seccomp_arch_remove (ctx, SCMP_ARCH_NATIVE)) < 0)
    return pr_error_set (err, -rc, "seccomp: remove the native architecture");

  /* noNewPrivileges is the config's decision (process.noNewPrivileges), not
   * libseccomp's: without NNP the filter is loaded while CAP_SYS_ADMIN is
   * still held. */
  rc = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (rc < 0)
    return pr_error_set (err, -rc, "seccomp: clear no_new_privs attribute");
  for (char **f = sc->flags; f && *f; f++)
    if (apply_flag (ctx, *f, err) < 0)
      return -1;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    if (add_syscall (ctx, &sc->syscalls[i], default_action, uses_notify, err) < 0)
      return -1;
  if (native && add_enosys_above_known (ctx, sc, default_action, err) < 0)
    return -1;
  *out = steal_pointer (&ctx);
  return 0;
}

/* Builds the whole filter into *out (not loaded): the native part merged
 * with the other architectures' (seccomp_merge(3) wants disjoint
 * architectures).  *uses_notify tells whether a rule needs the notify
 * listener. */
static int
build_filter (const struct pr_seccomp *sc, scmp_filter_ctx *out, bool *uses_notify, pr_error **err)
{
  _cleanup_scmp_ scmp_filter_ctx ctx = NULL;
  scmp_filter_ctx others = NULL;
  uint32_t default_action;
  int rc;

  *uses_notify = false;
  if (sc->default_action == NULL)
    return pr_error_invalid (err, "seccomp: missing defaultAction");
  if (resolve_action (sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret, &default_action, err) < 0)
    return -1;
  if (default_action == SCMP_ACT_NOTIFY)
    return pr_error_invalid (err, "seccomp: SCMP_ACT_NOTIFY cannot be the default action");

  if (build_part (sc, default_action, true, &ctx, uses_notify, err) < 0
      || build_part (sc, default_action, false, &others, uses_notify, err) < 0)
    return -1;
  if (others && (rc = seccomp_merge (ctx, others)) < 0)
    {
      seccomp_release (others);
      return pr_error_set (err, -rc, "seccomp: merge the architectures' filters");
    }

  if (*uses_notify && (sc->listener_path == NULL || sc->listener_path[0] == '\0'))
    return pr_error_invalid (err, "seccomp: SCMP_ACT_NOTIFY requires linux.seccomp.listenerPath");

  *out = steal_pointer (&ctx);
  return 0;
}

int
pr_seccomp_validate (const struct pr_seccomp *sc, pr_error **err)
{
  _cleanup_scmp_ scmp_filter_ctx ctx = NULL;
  bool uses_notify;

  return build_filter (sc, &ctx, &uses_notify, err);
}

int
pr_seccomp_load (const struct pr_seccomp *sc, int *notify_fd_out, pr_error **err)
{
  _cleanup_scmp_ scmp_filter_ctx ctx = NULL;
  bool uses_notify;
  int rc;

  *notify_fd_out = -1;
  if (build_filter (sc, &ctx, &uses_notify, err) < 0)
    return -1;

  rc = seccomp_load (ctx);
  if (rc < 0)
    return pr_error_set (err, -rc, "seccomp: load filter");

  if (uses_notify)
    {
      /* The kernel creates the listener O_CLOEXEC, so it cannot reach the
       * container's execve even if the caller forgets it. */
      rc = seccomp_notify_fd (ctx);
      if (rc < 0)
        return pr_error_set (err, -rc, "seccomp: get notify fd");
      *notify_fd_out = rc;
    }
  return 0;
}

/* Connects a stream socket to path.  A path longer than sun_path is reached
 * through its directory's /proc/self/fd entry, so deep listenerPaths under
 * a bundle still work. */
static int
connect_unix (const char *path, pr_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int fd = -1;
  _cleanup_close_ int dirfd = -1;
  _cleanup_free_ char *proxy = NULL;
  const char *target = path;

  if (strlen (path) >= sizeof addr.sun_path)
    {
      _cleanup_free_ char *d = xstrdup (path);
      _cleanup_free_ char *b = xstrdup (path);
      dirfd = open (dirname (d), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dirfd < 0)
        return pr_error_set (err, errno, "open directory of seccomp listener `%s`", path);
      proxy = xasprintf ("/proc/self/fd/%d/%s", dirfd, basename (b));
      target = proxy;
      if (strlen (target) >= sizeof addr.sun_path)
        return pr_error_set (err, ENAMETOOLONG, "seccomp listener path `%s`", path);
    }
  strcpy (addr.sun_path, target);

  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return pr_error_set (err, errno, "socket for seccomp listener");
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    return pr_error_set (err, errno, "connect to seccomp listener `%s`", path);
  return steal_fd (&fd);
}

int
pr_seccomp_listener_connect (const struct pr_seccomp *sc, pr_error **err)
{
  if (sc->listener_path == NULL || sc->listener_path[0] == '\0')
    return pr_error_invalid (err, "seccomp: no listenerPath to send the notify fd to");
  return connect_unix (sc->listener_path, err);
}

static int
gen_str (yajl_gen g, const char *s)
{
  return yajl_gen_string (g, (const unsigned char *) s, strlen (s)) == yajl_gen_status_ok ? 0 : -1;
}

char *
pr_seccomp_process_state (const struct pr_seccomp *sc, const char *state_json, pr_error **err)
{
  char errbuf[128];
  yajl_val st = yajl_tree_parse (state_json ? state_json : "", errbuf, sizeof errbuf);
  const char *pid_path[] = { "pid", NULL };
  const char *ver_path[] = { "ociVersion", NULL };
  yajl_val pid, ver;
  yajl_gen g;
  const unsigned char *buf;
  size_t len;
  char *out = NULL;

  if (st == NULL || !YAJL_IS_OBJECT (st))
    {
      if (st)
        yajl_tree_free (st);
      pr_error_invalid (err, "seccomp: container state is not a JSON object");
      return NULL;
    }
  pid = yajl_tree_get (st, pid_path, yajl_t_number);
  ver = yajl_tree_get (st, ver_path, yajl_t_string);
  g = yajl_gen_alloc (NULL);
  int bad = yajl_gen_map_open (g) != yajl_gen_status_ok || gen_str (g, "ociVersion") < 0
            || gen_str (g, ver ? YAJL_GET_STRING (ver) : "1.0.2") < 0 || gen_str (g, "fds") < 0
            || yajl_gen_array_open (g) != yajl_gen_status_ok || gen_str (g, "seccompFd") < 0
            || yajl_gen_array_close (g) != yajl_gen_status_ok || gen_str (g, "pid") < 0
            || yajl_gen_integer (g, pid && YAJL_IS_INTEGER (pid) ? YAJL_GET_INTEGER (pid) : 0) != yajl_gen_status_ok
            || gen_str (g, "metadata") < 0 || gen_str (g, sc->listener_metadata ? sc->listener_metadata : "") < 0
            || gen_str (g, "state") < 0;
  /* The state object itself goes in verbatim after "state": (yajl_gen
   * has no raw insert; the map is closed by hand). */
  if (!bad && yajl_gen_get_buf (g, &buf, &len) == yajl_gen_status_ok)
    out = xasprintf ("%.*s:%s}", (int) len, (const char *) buf, state_json);
  yajl_gen_free (g);
  yajl_tree_free (st);
  if (out == NULL)
    pr_error_invalid (err, "seccomp: cannot build the container process state");
  return out;
}

int
pr_seccomp_send_listener (const struct pr_seccomp *sc, int sock, int notify_fd, const char *state_json,
                          pr_error **err)
{
  size_t len, off;
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov;
  struct msghdr msg = { 0 };
  struct cmsghdr *cm;
  ssize_t n;

  _cleanup_free_ char *process_state = pr_seccomp_process_state (sc, state_json, err);

  if (process_state == NULL)
    return -1;
  state_json = process_state;

  /* The first chunk carries the fd; a stream socket may take the rest of
   * the JSON in further writes. */
  len = strlen (state_json);
  iov.iov_base = (void *) state_json;
  iov.iov_len = len;
  memset (&ctl, 0, sizeof ctl);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  cm = CMSG_FIRSTHDR (&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &notify_fd, sizeof (int));

  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return pr_error_set (err, errno, "send seccomp notify fd to `%s`", sc->listener_path);

  for (off = (size_t) n; off < len; off += (size_t) n)
    {
      n = send (sock, state_json + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        {
          n = 0;
          continue;
        }
      if (n < 0)
        return pr_error_set (err, errno, "send container state to seccomp listener `%s`", sc->listener_path);
    }
  /* End of the state for a listener that reads to EOF, without close(2):
   * close may be a notified syscall, and the listener serves none before
   * it has the whole state (issue #19 item 2). */
  if (shutdown (sock, SHUT_WR) < 0)
    return pr_error_set (err, errno, "end the state sent to seccomp listener `%s`", sc->listener_path);
  return 0;
}
