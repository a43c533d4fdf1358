/* policy_fields.c - checking each field of a rollout policy (see
 * policy.c for the document, its top-level keys and entry points): the
 * phase tables (user, env, network_mode, allowed_hosts), verifier.mounts,
 * hide, peers and drop_env, with the host-name, address and path syntax
 * they accept; and host matching against allowed_hosts, which must agree
 * with that host-name syntax.  Messages use pr_policy_perr (policy.c).
 * See policy.h and docs/rollout.md. */
#define _GNU_SOURCE
#include "policy-internal.h"
#include "policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <yajl/yajl_tree.h>

#include "../base/util.h"

static int
get_string (yajl_val v, const char *field, char **out, pr_error **err)
{
  if (!YAJL_IS_STRING (v))
    return pr_policy_type_err (err, field, "a string", v);
  *out = xstrdup (YAJL_GET_STRING (v));
  return 0;
}

int
pr_policy_get_array (yajl_val v, const char *field, pr_error **err)
{
  return YAJL_IS_ARRAY (v) ? 0 : pr_policy_type_err (err, field, "an array", v);
}

static bool
is_ipv4 (const char *s)
{
  struct in_addr a;
  return inet_pton (AF_INET, s, &a) == 1;
}

static bool
is_ipv6 (const char *s)
{
  struct in6_addr a;
  return inet_pton (AF_INET6, s, &a) == 1;
}

/* Why h (already lower-cased) is not a DNS name made of letters, digits
 * and '-' labels (RFC 1123 section 2.1), or NULL when it is one.  A name
 * whose last label is numeric must be a whole IPv4 literal: otherwise
 * "0.0.1" would, as a suffix, match the address 10.0.0.1. */
static const char *
dns_name_problem (const char *h)
{
  size_t len = strlen (h);
  if (len == 0)
    return "empty host name";
  if (strstr (h, "://"))
    return "is a URL; give the host name only, without a scheme";
  if (strchr (h, '/'))
    return "has a path; give the host name only";
  if (strchr (h, '@'))
    return "has user info; give the host name only";
  if (strchr (h, ':'))
    return "has a port (or is an IPv6 literal); give the host name only";
  if (strchr (h, '*'))
    return "wildcards other than a lone \"*\" are not supported (an entry already matches its subdomains)";
  if (len > 253)
    return "is longer than 253 characters";
  const char *label = h;
  for (const char *c = h;; c++)
    {
      if (*c == '.' || *c == '\0')
        {
          size_t n = (size_t) (c - label);
          if (n == 0)
            return "has an empty label";
          if (n > 63)
            return "has a label longer than 63 characters";
          if (label[0] == '-' || label[n - 1] == '-')
            return "has a label that starts or ends with '-'";
          if (*c == '\0')
            {
              if (pr_str_is_digits (label, n) && !is_ipv4 (h))
                return "is neither a host name nor an IPv4 address";
              return NULL;
            }
          label = c + 1;
          continue;
        }
      if (isspace ((unsigned char) *c))
        return "contains a space";
      if (!(isalnum ((unsigned char) *c) || *c == '-'))
        return "contains a character other than letters, digits, '-' and '.'";
    }
}

static char *
lower_dup (const char *s)
{
  char *r = xstrdup (s);
  for (char *c = r; *c; c++)
    *c = (char) tolower ((unsigned char) *c);
  return r;
}

/* Normalises an absolute path: repeated and trailing slashes and "."
 * components go away ("/logs//x/" -> "/logs/x").  NULL with *why set when
 * it is relative or has a ".." component (which would make the policy's
 * meaning depend on what the image's tree looks like). */
char *
pr_policy_normalise_abs (const char *in, const char **why)
{
  if (in[0] != '/')
    {
      *why = "must be an absolute path";
      return NULL;
    }
  if (strlen (in) >= PATH_MAX)
    {
      *why = "is too long";
      return NULL;
    }
  char *out = xmalloc (strlen (in) + 2);
  size_t o = 0;
  const char *p = in;
  while (*p)
    {
      while (*p == '/')
        p++;
      const char *s = p;
      while (*p && *p != '/')
        p++;
      size_t n = (size_t) (p - s);
      if (n == 0 || (n == 1 && s[0] == '.'))
        continue;
      if (n == 2 && s[0] == '.' && s[1] == '.')
        {
          free (out);
          *why = "must not contain \"..\"";
          return NULL;
        }
      out[o++] = '/';
      memcpy (out + o, s, n);
      o += n;
    }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

/* Kernel pseudo-filesystems the runtime mounts itself: hiding or
 * verifier-mounting over them would break the container, not the grading. */
const char *
pr_policy_pseudo_fs_prefix (const char *path)
{
  static const char *const roots[] = { "/proc", "/sys", "/dev" };
  for (size_t i = 0; i < PR_ARRAY_SIZE (roots); i++)
    if (pr_path_is_under (path, roots[i]))
      return roots[i];
  return NULL;
}

static int
parse_mode (yajl_val v, const char *field, enum pr_net_mode *out, pr_error **err)
{
  if (!YAJL_IS_STRING (v))
    return pr_policy_type_err (err, field, "a string", v);
  const char *s = YAJL_GET_STRING (v);
  if (strcmp (s, "no-network") == 0 || strcmp (s, "none") == 0)
    *out = PR_NET_NONE;
  else if (strcmp (s, "allowlist") == 0)
    *out = PR_NET_ALLOWLIST;
  else if (strcmp (s, "public") == 0)
    *out = PR_NET_PUBLIC;
  else
    return pr_policy_perr (err, "%s: unknown mode \"%s\" (expected no-network, none, allowlist or public)", field, s);
  return 0;
}

static int
parse_hosts (yajl_val v, const char *field, char ***out, pr_error **err)
{
  if (pr_policy_get_array (v, field, err) < 0)
    return -1;
  _cleanup_strv_ char **hosts = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < YAJL_GET_ARRAY (v)->len; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *sub = xasprintf ("%s[%zu]", field, i);
      if (!YAJL_IS_STRING (e))
        return pr_policy_type_err (err, sub, "a string", e);
      _cleanup_free_ char *h = lower_dup (YAJL_GET_STRING (e));
      size_t n = strlen (h);
      if (n > 1 && h[n - 1] == '.')
        h[n - 1] = '\0'; /* "example.com." is the same name */
      if (strcmp (h, "*") != 0)
        {
          const char *why = dns_name_problem (h);
          if (why)
            return pr_policy_perr (err, "%s: \"%s\" %s", sub, YAJL_GET_STRING (e), why);
        }
      bool dup = false;
      for (size_t j = 0; hosts[j] && !dup; j++)
        dup = strcmp (hosts[j], h) == 0;
      if (!dup)
        hosts = pr_strv_append (hosts, h);
    }
  *out = steal_pointer (&hosts);
  return 0;
}

/* allowed_ports: integers 1-65535 (duplicates dropped, like allowed_hosts).
 * Ports 80 and 443 are always reachable; the list only adds ports. */
static int
parse_ports (yajl_val v, const char *field, uint16_t **out, size_t *n_out, pr_error **err)
{
  if (pr_policy_get_array (v, field, err) < 0)
    return -1;
  size_t len = YAJL_GET_ARRAY (v)->len, n = 0;
  _cleanup_free_ uint16_t *ports = xmalloc0 ((len + 1) * sizeof *ports);
  for (size_t i = 0; i < len; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *sub = xasprintf ("%s[%zu]", field, i);
      if (!YAJL_IS_INTEGER (e))
        return pr_policy_type_err (err, sub, "an integer", e);
      long long pv = YAJL_GET_INTEGER (e);
      if (pv < 1 || pv > 65535)
        return pr_policy_perr (err, "%s: %lld is not a port (1-65535)", sub, pv);
      bool dup = false;
      for (size_t j = 0; j < n && !dup; j++)
        dup = ports[j] == pv;
      if (!dup)
        ports[n++] = (uint16_t) pv;
    }
  *out = steal_pointer (&ports);
  *n_out = n;
  return 0;
}

static bool
valid_env_name (const char *k)
{
  if (*k == '\0')
    return false;
  for (const char *c = k; *c; c++)
    if (*c == '=' || !isgraph ((unsigned char) *c))
      return false;
  return true;
}

static int
parse_env (yajl_val v, const char *field, struct pr_phase_policy *ph, pr_error **err)
{
  if (!YAJL_IS_OBJECT (v))
    return pr_policy_type_err (err, field, "an object", v);
  size_t n = YAJL_GET_OBJECT (v)->len;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp (YAJL_GET_OBJECT (v)->keys[i], YAJL_GET_OBJECT (v)->keys[j]) == 0)
        return pr_policy_perr (err, "%s: key \"%s\" given twice", field, YAJL_GET_OBJECT (v)->keys[i]);
  ph->env = xmalloc0 ((n + 1) * sizeof *ph->env);
  for (size_t i = 0; i < n; i++)
    {
      const char *k = YAJL_GET_OBJECT (v)->keys[i];
      yajl_val val = YAJL_GET_OBJECT (v)->values[i];
      if (!valid_env_name (k))
        return pr_policy_perr (err, "%s: \"%s\" is not a valid variable name (non-empty, no '=', no spaces)", field, k);
      /* PROCTOR_* is the runtime's own channel (PROCTOR_PHASE selects the
       * phase) and is scrubbed from every session. */
      if (strncmp (k, "PROCTOR_", 8) == 0)
        return pr_policy_perr (err, "%s: \"%s\": PROCTOR_* variables are reserved", field, k);
      if (!YAJL_IS_STRING (val))
        {
          _cleanup_free_ char *sub = xasprintf ("%s.%s", field, k);
          return pr_policy_type_err (err, sub, "a string", val);
        }
      ph->env[ph->n_env].key = xstrdup (k);
      ph->env[ph->n_env].value = xstrdup (YAJL_GET_STRING (val));
      ph->n_env++;
    }
  return 0;
}

static int
parse_user (yajl_val v, const char *field, char **out, pr_error **err)
{
  _cleanup_free_ char *u = NULL;
  if (get_string (v, field, &u, err) < 0)
    return -1;
  if (*u == '\0')
    return pr_policy_perr (err, "%s: empty user", field);
  for (const char *c = u; *c; c++)
    if (!isgraph ((unsigned char) *c))
      return pr_policy_perr (err, "%s: \"%s\" contains a space or control character", field, u);
  const char *colon = strchr (u, ':');
  if (colon && (colon == u || colon[1] == '\0' || strchr (colon + 1, ':')))
    return pr_policy_perr (err, "%s: \"%s\" is not of the form user[:group]", field, u);
  *out = steal_pointer (&u);
  return 0;
}

static int
parse_mounts (yajl_val v, struct pr_policy *p, bool check_sources, pr_error **err)
{
  static const char *const keys[] = { "source", "destination", "readonly", NULL };
  if (pr_policy_get_array (v, "verifier.mounts", err) < 0)
    return -1;
  size_t n = YAJL_GET_ARRAY (v)->len;
  p->verifier_mounts = xmalloc0 ((n + 1) * sizeof *p->verifier_mounts);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val m = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *where = xasprintf ("verifier.mounts[%zu]", i);
      if (!YAJL_IS_OBJECT (m))
        return pr_policy_type_err (err, where, "an object", m);
      if (pr_policy_check_keys (m, where, keys, err) < 0)
        return -1;
      struct pr_policy_mount *pm = &p->verifier_mounts[p->n_verifier_mounts++];

      yajl_val src = pr_policy_member (m, "source");
      yajl_val dst = pr_policy_member (m, "destination");
      yajl_val ro = pr_policy_member (m, "readonly");
      if (src == NULL)
        return pr_policy_perr (err, "%s.source: missing", where);
      if (dst == NULL)
        return pr_policy_perr (err, "%s.destination: missing", where);

      _cleanup_free_ char *sf = xasprintf ("%s.source", where);
      _cleanup_free_ char *df = xasprintf ("%s.destination", where);
      _cleanup_free_ char *raw = NULL;
      const char *why = NULL;
      if (get_string (src, sf, &raw, err) < 0)
        return -1;
      pm->source = pr_policy_normalise_abs (raw, &why);
      if (pm->source == NULL)
        return pr_policy_perr (err, "%s: \"%s\" %s", sf, raw, why);
      struct stat st;
      if (check_sources && stat (pm->source, &st) < 0)
        {
          if (errno == ENOENT || errno == ENOTDIR)
            return pr_policy_perr (err, "%s: \"%s\" does not exist", sf, raw);
          return pr_policy_perr_errno (err, errno, "%s: stat `%s`", sf, raw);
        }

      free (steal_pointer (&raw));
      if (get_string (dst, df, &raw, err) < 0)
        return -1;
      pm->destination = pr_policy_normalise_abs (raw, &why);
      if (pm->destination == NULL)
        return pr_policy_perr (err, "%s: \"%s\" %s", df, raw, why);
      if (strcmp (pm->destination, "/") == 0)
        return pr_policy_perr (err, "%s: cannot mount over \"/\"", df);
      const char *pseudo = pr_policy_pseudo_fs_prefix (pm->destination);
      if (pseudo)
        return pr_policy_perr (err, "%s: \"%s\" is under %s, which cannot be mounted over", df, raw, pseudo);
      for (size_t j = 0; j + 1 < p->n_verifier_mounts; j++)
        if (strcmp (p->verifier_mounts[j].destination, pm->destination) == 0)
          return pr_policy_perr (err, "%s: \"%s\" is already the destination of verifier.mounts[%zu]", df, raw, j);

      if (ro)
        {
          if (!YAJL_IS_TRUE (ro) && !YAJL_IS_FALSE (ro))
            {
              _cleanup_free_ char *rf = xasprintf ("%s.readonly", where);
              return pr_policy_type_err (err, rf, "a boolean", ro);
            }
          pm->readonly = YAJL_IS_TRUE (ro);
        }
    }
  return 0;
}

/* verifier.agent_processes: "keep" | "freeze" | "kill" (SPEC section 2
 * "Out of the agent's reach"). */
static int
parse_agent_processes (yajl_val v, enum pr_agent_processes *out, pr_error **err)
{
  static const char *const names[] = { "keep", "freeze", "kill" };
  static const enum pr_agent_processes values[] = { PR_AGENT_PROCS_KEEP, PR_AGENT_PROCS_FREEZE, PR_AGENT_PROCS_KILL };
  const char *s = YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
  if (s == NULL)
    return pr_policy_type_err (err, "verifier.agent_processes", "a string", v);
  for (size_t i = 0; i < PR_ARRAY_SIZE (names); i++)
    if (strcmp (s, names[i]) == 0)
      {
        *out = values[i];
        return 0;
      }
  return pr_policy_perr (err, "verifier.agent_processes: \"%s\" must be \"keep\", \"freeze\" or \"kill\"", s);
}

/* One verifier.resources limit: a positive integer, or -1 for none. */
static int
parse_limit (yajl_val v, const char *field, long long min, int64_t *out, pr_error **err)
{
  if (!YAJL_IS_INTEGER (v))
    return pr_policy_type_err (err, field, "an integer", v);
  long long n = YAJL_GET_INTEGER (v);
  if (n != -1 && n < min)
    return pr_policy_perr (err, "%s: %lld must be -1 (no limit) or at least %lld", field, n, min);
  *out = n;
  return 0;
}

/* verifier.resources: {"memory": BYTES, "pids": N}, the verifier and
 * setup sessions' own cgroup budget (rollout/budget.h).  A memory limit
 * under 4 MiB or a pids limit under 8 could not run a shell. */
static int
parse_resources (yajl_val v, struct pr_policy *p, pr_error **err)
{
  static const char *const keys[] = { "memory", "pids", NULL };
  if (!YAJL_IS_OBJECT (v))
    return pr_policy_type_err (err, "verifier.resources", "an object", v);
  if (pr_policy_check_keys (v, "verifier.resources", keys, err) < 0)
    return -1;
  yajl_val x;
  if ((x = pr_policy_member (v, "memory"))
      && parse_limit (x, "verifier.resources.memory", 4LL << 20, &p->verifier_memory, err) < 0)
    return -1;
  if ((x = pr_policy_member (v, "pids")) && parse_limit (x, "verifier.resources.pids", 8, &p->verifier_pids, err) < 0)
    return -1;
  return 0;
}

int
pr_policy_parse_phase (yajl_val v, const char *name, struct pr_phase_policy *ph, struct pr_policy *p,
                       bool check_sources, pr_error **err)
{
  static const char *const keys[] = { "user", "env", "network_mode", "allowed_hosts", "allowed_ports", NULL };
  static const char *const vkeys[] = { "user", "env", "network_mode", "allowed_hosts", "allowed_ports", "mounts",
                                       "agent_processes", "resources", "base", "base_paths", NULL };
  bool verifier = strcmp (name, "verifier") == 0;
  if (!YAJL_IS_OBJECT (v))
    return pr_policy_type_err (err, name, "an object", v);
  if (pr_policy_check_keys (v, name, verifier ? vkeys : keys, err) < 0)
    return -1;

  yajl_val x;
  if ((x = pr_policy_member (v, "user")))
    {
      _cleanup_free_ char *f = xasprintf ("%s.user", name);
      if (parse_user (x, f, &ph->user, err) < 0)
        return -1;
    }
  if ((x = pr_policy_member (v, "env")))
    {
      _cleanup_free_ char *f = xasprintf ("%s.env", name);
      if (parse_env (x, f, ph, err) < 0)
        return -1;
    }
  if ((x = pr_policy_member (v, "network_mode")))
    {
      _cleanup_free_ char *f = xasprintf ("%s.network_mode", name);
      if (parse_mode (x, f, &ph->network_mode, err) < 0)
        return -1;
    }
  if ((x = pr_policy_member (v, "allowed_hosts")))
    {
      _cleanup_free_ char *f = xasprintf ("%s.allowed_hosts", name);
      if (parse_hosts (x, f, &ph->allowed_hosts, err) < 0)
        return -1;
      /* allowed_hosts only means something under "allowlist" in the same
       * table; a list next to another mode (or to no mode, so the mode
       * comes from another table with its own list) would be silently
       * ignored, and the user would believe a policy that is not applied. */
      if (ph->allowed_hosts[0] != NULL && ph->network_mode != PR_NET_ALLOWLIST)
        {
          if (ph->network_mode == PR_NET_UNSET)
            return pr_policy_perr (err, "%s: needs \"network_mode\": \"allowlist\" in the same table", f);
          return pr_policy_perr (err, "%s: only used with network_mode \"allowlist\" (%s.network_mode is \"%s\")", f,
                                 name, pr_net_mode_name (ph->network_mode));
        }
    }
  if ((x = pr_policy_member (v, "allowed_ports")))
    {
      _cleanup_free_ char *f = xasprintf ("%s.allowed_ports", name);
      if (parse_ports (x, f, &ph->allowed_ports, &ph->n_allowed_ports, err) < 0)
        return -1;
      /* Like allowed_hosts: only meaningful next to a mode that reaches
       * out, in the same table. */
      if (ph->n_allowed_ports > 0 && ph->network_mode != PR_NET_ALLOWLIST && ph->network_mode != PR_NET_PUBLIC)
        {
          if (ph->network_mode == PR_NET_UNSET)
            return pr_policy_perr (err, "%s: needs \"network_mode\": \"allowlist\" or \"public\" in the same table", f);
          return pr_policy_perr (err, "%s: only used with network_mode \"allowlist\" or \"public\" (%s.network_mode is \"%s\")",
                                 f, name, pr_net_mode_name (ph->network_mode));
        }
    }
  if (verifier && (x = pr_policy_member (v, "agent_processes"))
      && parse_agent_processes (x, &p->agent_processes, err) < 0)
    return -1;
  if (verifier && (x = pr_policy_member (v, "resources")) && parse_resources (x, p, err) < 0)
    return -1;
  if (verifier && (x = pr_policy_member (v, "base")) && pr_policy_parse_base (x, &p->base, err) < 0)
    return -1;
  if (verifier && (x = pr_policy_member (v, "base_paths")) && pr_policy_parse_base_paths (x, p, err) < 0)
    return -1;
  if (verifier && (x = pr_policy_member (v, "mounts")))
    return parse_mounts (x, p, check_sources, err);
  return 0;
}

int
pr_policy_parse_hide (yajl_val v, struct pr_policy *p, pr_error **err)
{
  if (pr_policy_get_array (v, "hide", err) < 0)
    return -1;
  size_t n = YAJL_GET_ARRAY (v)->len;
  p->hide = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *f = xasprintf ("hide[%zu]", i);
      if (!YAJL_IS_STRING (e))
        return pr_policy_type_err (err, f, "a string", e);
      const char *raw = YAJL_GET_STRING (e);
      const char *why = NULL;
      _cleanup_free_ char *path = pr_policy_normalise_abs (raw, &why);
      if (path == NULL)
        return pr_policy_perr (err, "%s: \"%s\" %s", f, raw, why);
      if (strcmp (path, "/") == 0)
        return pr_policy_perr (err, "%s: \"/\" cannot be hidden", f);
      const char *pseudo = pr_policy_pseudo_fs_prefix (path);
      if (pseudo)
        return pr_policy_perr (err, "%s: \"%s\" is under %s, which cannot be hidden", f, raw, pseudo);
      for (size_t j = 0; j < i; j++)
        {
          if (strcmp (p->hide[j], path) == 0)
            return pr_policy_perr (err, "%s: \"%s\" is listed twice (hide[%zu])", f, raw, j);
          /* Nested entries: the outer one is moved out of the rootfs whole,
           * so the inner one would have nothing left to move. */
          if (pr_path_is_under (path, p->hide[j]))
            return pr_policy_perr (err, "%s: \"%s\" is inside \"%s\" (hide[%zu]), which is already hidden", f, raw,
                                   p->hide[j], j);
          if (pr_path_is_under (p->hide[j], path))
            return pr_policy_perr (err, "%s: \"%s\" contains \"%s\" (hide[%zu]); list only the outer path", f, raw,
                                   p->hide[j], j);
        }
      p->hide[i] = steal_pointer (&path);
    }
  return 0;
}

static int
parse_port (const char *s, uint16_t *out)
{
  size_t n = strlen (s);
  if (n == 0 || n > 5 || !pr_str_is_digits (s, n))
    return -1;
  long v = strtol (s, NULL, 10);
  if (v < 1 || v > 65535)
    return -1;
  *out = (uint16_t) v;
  return 0;
}

/* target is "tcp:HOST:PORT"; HOST is an IPv4 literal, a bracketed IPv6
 * literal (stored without brackets) or a host name. */
static int
parse_target (const char *target, const char *field, struct pr_peer *peer, pr_error **err)
{
  static const char form[] = "must be \"tcp:HOST:PORT\" (HOST an IPv4 address, [IPv6] address or host name)";
  if (strncmp (target, "tcp:", 4) != 0)
    return pr_policy_perr (err, "%s: \"%s\" %s", field, target, form);
  const char *rest = target + 4;
  _cleanup_free_ char *host = NULL;
  const char *port;
  if (rest[0] == '[')
    {
      const char *close = strchr (rest, ']');
      if (close == NULL || close[1] != ':')
        return pr_policy_perr (err, "%s: \"%s\" %s", field, target, form);
      host = strndup (rest + 1, (size_t) (close - rest - 1));
      if (host == NULL)
        abort ();
      if (!is_ipv6 (host))
        return pr_policy_perr (err, "%s: \"%s\": \"%s\" is not an IPv6 address", field, target, host);
      port = close + 2;
    }
  else
    {
      const char *colon = strrchr (rest, ':');
      if (colon == NULL || colon == rest)
        return pr_policy_perr (err, "%s: \"%s\" %s", field, target, form);
      host = strndup (rest, (size_t) (colon - rest));
      if (host == NULL)
        abort ();
      if (strchr (host, ':'))
        return pr_policy_perr (err, "%s: \"%s\": an IPv6 address must be in brackets, as \"tcp:[%s]:PORT\"", field,
                               target, host);
      char *lower = lower_dup (host);
      free (host);
      host = lower;
      const char *why = dns_name_problem (host);
      if (why)
        return pr_policy_perr (err, "%s: \"%s\": host \"%s\" %s", field, target, host, why);
      port = colon + 1;
    }
  if (parse_port (port, &peer->target_port) < 0)
    return pr_policy_perr (err, "%s: \"%s\": port \"%s\" is not in 1-65535", field, target, port);
  peer->target_host = steal_pointer (&host);
  return 0;
}

int
pr_policy_parse_peers (yajl_val v, struct pr_policy *p, pr_error **err)
{
  static const char *const keys[] = { "name", "port", "target", NULL };
  if (pr_policy_get_array (v, "peers", err) < 0)
    return -1;
  size_t n = YAJL_GET_ARRAY (v)->len;
  p->peers = xmalloc0 ((n + 1) * sizeof *p->peers);
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *where = xasprintf ("peers[%zu]", i);
      if (!YAJL_IS_OBJECT (e))
        return pr_policy_type_err (err, where, "an object", e);
      if (pr_policy_check_keys (e, where, keys, err) < 0)
        return -1;
      struct pr_peer *peer = &p->peers[p->n_peers++];
      yajl_val name = pr_policy_member (e, "name"), port = pr_policy_member (e, "port"),
               target = pr_policy_member (e, "target");
      if (name == NULL)
        return pr_policy_perr (err, "%s.name: missing", where);
      if (port == NULL)
        return pr_policy_perr (err, "%s.port: missing", where);
      if (target == NULL)
        return pr_policy_perr (err, "%s.target: missing", where);

      _cleanup_free_ char *f = xasprintf ("%s.name", where);
      if (!YAJL_IS_STRING (name))
        return pr_policy_type_err (err, f, "a string", name);
      peer->name = lower_dup (YAJL_GET_STRING (name));
      const char *why = dns_name_problem (peer->name);
      if (why == NULL && is_ipv4 (peer->name))
        why = "is an address, not a name";
      if (why)
        return pr_policy_perr (err, "%s: \"%s\" %s", f, YAJL_GET_STRING (name), why);

      free (f);
      f = xasprintf ("%s.port", where);
      if (!YAJL_IS_INTEGER (port))
        return pr_policy_type_err (err, f, "an integer", port);
      long long pv = YAJL_GET_INTEGER (port);
      if (pv < 1 || pv > 65535)
        return pr_policy_perr (err, "%s: %lld is not in 1-65535", f, pv);
      peer->port = (uint16_t) pv;
      for (size_t j = 0; j + 1 < p->n_peers; j++)
        if (p->peers[j].port == peer->port && strcmp (p->peers[j].name, peer->name) == 0)
          return pr_policy_perr (err, "%s: \"%s\" port %u is already declared by peers[%zu]", f, peer->name,
                                 peer->port, j);

      free (f);
      f = xasprintf ("%s.target", where);
      if (!YAJL_IS_STRING (target))
        return pr_policy_type_err (err, f, "a string", target);
      if (parse_target (YAJL_GET_STRING (target), f, peer, err) < 0)
        return -1;
    }
  return 0;
}

int
pr_policy_parse_drop_env (yajl_val v, struct pr_policy *p, pr_error **err)
{
  if (pr_policy_get_array (v, "drop_env", err) < 0)
    return -1;
  p->drop_env = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < YAJL_GET_ARRAY (v)->len; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *f = xasprintf ("drop_env[%zu]", i);
      if (!YAJL_IS_STRING (e))
        return pr_policy_type_err (err, f, "a string", e);
      const char *s = YAJL_GET_STRING (e);
      if (*s == '\0')
        return pr_policy_perr (err, "%s: empty pattern", f);
      if (strchr (s, '='))
        return pr_policy_perr (err, "%s: \"%s\": a pattern matches variable names and cannot contain '='", f, s);
      p->drop_env = pr_strv_append (p->drop_env, s);
    }
  return 0;
}

static int
hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* phase_secret_sha256: the hex sha256 of the secret the harness puts in
 * the `proctor-phase PHASE SECRET -- ...` argv switch (phase.h).  Only the
 * digest is in the policy, so reading the policy (rollout status, the
 * engine's config on the host) does not give the secret away. */
int
pr_policy_parse_phase_secret (yajl_val v, struct pr_policy *p, pr_error **err)
{
  static const char field[] = "phase_secret_sha256";
  if (!YAJL_IS_STRING (v))
    return pr_policy_type_err (err, field, "a string of 64 hex digits", v);
  const char *s = YAJL_GET_STRING (v);
  size_t n = strlen (s);
  if (n != 2 * PR_PHASE_SECRET_LEN)
    return pr_policy_perr (err, "%s: expected 64 hex digits (a sha256 digest), got %zu characters", field, n);
  for (size_t i = 0; i < PR_PHASE_SECRET_LEN; i++)
    {
      int hi = hex_digit (s[2 * i]), lo = hex_digit (s[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return pr_policy_perr (err, "%s: expected 64 hex digits (a sha256 digest), got a non-hex character", field);
      p->phase_secret_sha256[i] = (uint8_t) (hi << 4 | lo);
    }
  p->has_phase_secret = true;
  return 0;
}

bool
pr_policy_port_allowed (const uint16_t *ports, size_t n, uint16_t port)
{
  if (port == 80 || port == 443)
    return true;
  for (size_t i = 0; i < n; i++)
    if (ports[i] == port)
      return true;
  return false;
}

bool
pr_policy_host_allowed (char *const *list, const char *host)
{
  if (list == NULL || host == NULL || *host == '\0')
    return false;
  size_t hl = strlen (host);
  if (hl > 1 && host[hl - 1] == '.')
    hl--;
  /* Suffix matching is for names: "1.2.3.4" (or anything whose last
   * label is numeric, which no DNS name has) must not count as a
   * "subdomain" of an entry "2.3.4". */
  _cleanup_free_ char *h = strndup (host, hl);
  if (h == NULL)
    abort ();
  const char *last = strrchr (h, '.');
  last = last ? last + 1 : h;
  bool literal = is_ipv6 (h) || pr_str_is_digits (last, strlen (last));
  for (size_t i = 0; list[i]; i++)
    {
      const char *e = list[i];
      size_t el = strlen (e);
      if (strcmp (e, "*") == 0)
        return true;
      if (el == hl && strncasecmp (h, e, hl) == 0)
        return true;
      if (!literal && hl > el + 1 && h[hl - el - 1] == '.' && strncasecmp (h + hl - el, e, el) == 0)
        return true;
    }
  return false;
}
