/* policy.c - the rollout policy document (version 1) as a whole: reading
 * the `run.proctor.rollout` annotation / `--rollout-policy` value (inline
 * or "@/path"), the size, JSON and top-level key checks, the version and
 * defaults, the one-line "rollout policy: " messages and yajl-tree helpers
 * shared with policy_fields.c, the phase fallbacks for network mode and
 * allowed hosts, env-name matching, the normalised JSON form shown by
 * `proctor rollout status`, and freeing.  Each table's fields are checked
 * in policy_fields.c.  See policy.h and docs/rollout.md. */
#define _GNU_SOURCE
#include "policy.h"
#include "policy-internal.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../base/json.h"
#include "../base/util.h"

#define PREFIX "rollout policy: "

/* A policy is a small hand-written document; anything this large is a
 * mistake (or an attack on the annotation path), not a policy. */
#define POLICY_MAX_BYTES (1024 * 1024)

/* Messages quote the user's keys and values back; escaping control
 * characters keeps them one line (a key may contain "\n"). */
static char *
one_line (const char *s)
{
  char *out = xmalloc (strlen (s) * 4 + 1);
  char *o = out;
  for (const unsigned char *c = (const unsigned char *) s; *c; c++)
    {
      if (*c == '\n')
        o += sprintf (o, "\\n");
      else if (*c < 0x20 || *c == 0x7f)
        o += sprintf (o, "\\x%02x", *c);
      else
        *o++ = (char) *c;
    }
  *o = '\0';
  return out;
}

int
pr_policy_perr_errno (pr_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  char *clean = one_line (msg);
  pr_error_set (err, errnum, PREFIX "%s", clean);
  free (clean);
  free (msg);
  return -1;
}

int
pr_policy_perr (pr_error **err, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  char *clean = one_line (msg);
  pr_error_set (err, 0, PREFIX "%s", clean);
  free (clean);
  free (msg);
  return -1;
}

static const char *
json_type (yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    return "null";
  if (YAJL_IS_STRING (v))
    return "a string";
  if (YAJL_IS_INTEGER (v))
    return "an integer";
  if (YAJL_IS_NUMBER (v))
    return "a number";
  if (YAJL_IS_OBJECT (v))
    return "an object";
  if (YAJL_IS_ARRAY (v))
    return "an array";
  return "a boolean";
}

int
pr_policy_type_err (pr_error **err, const char *field, const char *want, yajl_val got)
{
  return pr_policy_perr (err, "%s: expected %s, got %s", field, want, json_type (got));
}

/* Rejects keys of obj not in allowed, and keys given twice (yajl's tree
 * keeps both, and silently taking one would hide a typo'd override).
 * where is the object's field path, NULL for the top level. */
int
pr_policy_check_keys (yajl_val obj, const char *where, const char *const *allowed, pr_error **err)
{
  size_t n = YAJL_GET_OBJECT (obj)->len;
  const char **keys = YAJL_GET_OBJECT (obj)->keys;
  for (size_t i = 0; i < n; i++)
    {
      bool known = false;
      for (size_t j = 0; allowed[j] && !known; j++)
        known = strcmp (keys[i], allowed[j]) == 0;
      if (!known)
        return where ? pr_policy_perr (err, "%s: unknown key \"%s\"", where, keys[i])
                     : pr_policy_perr (err, "unknown key \"%s\"", keys[i]);
      for (size_t j = 0; j < i; j++)
        if (strcmp (keys[i], keys[j]) == 0)
          return where ? pr_policy_perr (err, "%s: key \"%s\" given twice", where, keys[i])
                       : pr_policy_perr (err, "key \"%s\" given twice", keys[i]);
    }
  return 0;
}

/* The member `key` of obj; JSON null counts as absent, so converters that
 * emit null for unset task.toml keys produce the defaults. */
yajl_val
pr_policy_member (yajl_val obj, const char *key)
{
  size_t n = YAJL_GET_OBJECT (obj)->len;
  for (size_t i = 0; i < n; i++)
    if (strcmp (YAJL_GET_OBJECT (obj)->keys[i], key) == 0)
      {
        yajl_val v = YAJL_GET_OBJECT (obj)->values[i];
        return YAJL_IS_NULL (v) ? NULL : v;
      }
  return NULL;
}

/* yajl's verbose parse error spans several lines (the text and a caret);
 * the contract is one line, so keep the first. */
static void
first_line (char *s)
{
  s[strcspn (s, "\n")] = '\0';
  size_t n = strlen (s);
  while (n > 0 && isspace ((unsigned char) s[n - 1]))
    s[--n] = '\0';
}

/* "network": {"transparent": BOOL}: transparent egress (docs/rollout.md
 * "Transparent egress"), on unless false; whether it was given is kept. */
static int
parse_network (yajl_val v, struct pr_policy *p, pr_error **err)
{
  static const char *const keys[] = { "transparent", NULL };
  if (!YAJL_IS_OBJECT (v))
    return pr_policy_type_err (err, "network", "an object", v);
  if (pr_policy_check_keys (v, "network", keys, err) < 0)
    return -1;
  yajl_val t = pr_policy_member (v, "transparent");
  if (t == NULL)
    return 0;
  if (!YAJL_IS_TRUE (t) && !YAJL_IS_FALSE (t))
    return pr_policy_type_err (err, "network.transparent", "true or false", t);
  p->transparent = YAJL_IS_TRUE (t) ? PR_TRANSPARENT_ON : PR_TRANSPARENT_OFF;
  return 0;
}

static int
parse_document (const char *data, size_t len, bool check_sources, struct pr_policy **out, pr_error **err)
{
  static const char *const keys[] = { "version", "environment", "agent", "verifier", "hide", "peers", "drop_env",
                                      "phase_secret_sha256", "network", NULL };
  if (len > POLICY_MAX_BYTES)
    return pr_policy_perr (err, "document is larger than %d bytes", POLICY_MAX_BYTES);
  if (memchr (data, '\0', len))
    return pr_policy_perr (err, "malformed JSON: NUL byte in the document");
  long esc = pr_json_nul_escape (data, len);
  if (esc >= 0)
    return pr_policy_perr (err, "malformed JSON: \\u0000 (NUL) in a string at offset %ld", esc);
  _cleanup_free_ char *buf = xmalloc (len + 1);
  memcpy (buf, data, len);
  buf[len] = '\0';

  char ebuf[512] = "";
  yajl_val tree = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  if (tree == NULL)
    {
      first_line (ebuf);
      return pr_policy_perr (err, "malformed JSON: %s", ebuf[0] ? ebuf : "parse error");
    }

  struct pr_policy *p = xmalloc0 (sizeof *p);
  int ret = -1;
  yajl_val v;
  if (!YAJL_IS_OBJECT (tree))
    {
      pr_policy_perr (err, "expected a JSON object, got %s", json_type (tree));
      goto out;
    }
  if (pr_policy_check_keys (tree, NULL, keys, err) < 0)
    goto out;

  v = pr_policy_member (tree, "version");
  if (v == NULL)
    {
      pr_policy_perr (err, "version: missing (expected 1)");
      goto out;
    }
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) != 1)
    {
      if (YAJL_IS_INTEGER (v))
        pr_policy_perr (err, "version: unsupported version %lld (expected 1)", YAJL_GET_INTEGER (v));
      else
        pr_policy_type_err (err, "version", "the integer 1", v);
      goto out;
    }
  p->version = 1;

  if ((v = pr_policy_member (tree, "environment"))
      && pr_policy_parse_phase (v, "environment", &p->environment, p, check_sources, err) < 0)
    goto out;
  if ((v = pr_policy_member (tree, "agent"))
      && pr_policy_parse_phase (v, "agent", &p->agent, p, check_sources, err) < 0)
    goto out;
  if ((v = pr_policy_member (tree, "verifier"))
      && pr_policy_parse_phase (v, "verifier", &p->verifier, p, check_sources, err) < 0)
    goto out;

  if ((v = pr_policy_member (tree, "hide")))
    {
      if (pr_policy_parse_hide (v, p, err) < 0)
        goto out;
    }
  else
    {
      p->hide = xmalloc0 (3 * sizeof (char *));
      p->hide[0] = xstrdup ("/tests");
      p->hide[1] = xstrdup ("/logs");
    }
  if ((v = pr_policy_member (tree, "peers")) && pr_policy_parse_peers (v, p, err) < 0)
    goto out;
  if ((v = pr_policy_member (tree, "drop_env")) && pr_policy_parse_drop_env (v, p, err) < 0)
    goto out;
  if ((v = pr_policy_member (tree, "phase_secret_sha256")) && pr_policy_parse_phase_secret (v, p, err) < 0)
    goto out;
  if ((v = pr_policy_member (tree, "network")) && parse_network (v, p, err) < 0)
    goto out;

  *out = steal_pointer (&p);
  ret = 0;
out:
  if (p)
    pr_policy_free (p);
  yajl_tree_free (tree);
  return ret;
}

int
pr_policy_parse (const char *data, size_t len, struct pr_policy **out, pr_error **err)
{
  return parse_document (data, len, true, out, err);
}

int
pr_policy_parse_saved (const char *data, size_t len, struct pr_policy **out, pr_error **err)
{
  return parse_document (data, len, false, out, err);
}

int
pr_policy_load (const char *value, struct pr_policy **out, pr_error **err)
{
  if (value == NULL)
    return pr_policy_perr (err, "empty value");
  if (value[0] != '@')
    return pr_policy_parse (value, strlen (value), out, err);
  const char *path = value + 1;
  if (path[0] != '/')
    return pr_policy_perr (err, "\"%s\": a policy file must be given as \"@/absolute/path\"", value);
  struct stat st;
  /* Not the errno text for ENOENT: podman reads "no such file or
   * directory" in a runtime's error as "executable not found" (exit 127). */
  if (stat (path, &st) < 0 && errno == ENOENT)
    {
      pr_policy_perr (err, "policy file `%s` is missing", path);
      if (err && *err)
        (*err)->errnum = ENOENT;
      return -1;
    }
  if (stat (path, &st) < 0)
    return pr_policy_perr_errno (err, errno, "read `%s`", path);
  if (!S_ISREG (st.st_mode))
    return pr_policy_perr (err, "read `%s`: not a regular file", path);
  if (st.st_size > POLICY_MAX_BYTES)
    return pr_policy_perr (err, "read `%s`: larger than %d bytes", path, POLICY_MAX_BYTES);
  _cleanup_free_ char *data = NULL;
  size_t len = 0;
  _cleanup_error_ pr_error *rerr = NULL;
  if (pr_read_file (path, &data, &len, &rerr) < 0)
    return pr_policy_perr_errno (err, rerr->errnum, "read `%s`", path);
  if (pr_policy_parse (data, len, out, &rerr) < 0)
    {
      /* Name the file, keeping the "rollout policy: " prefix first. */
      const char *m = rerr->msg;
      if (strncmp (m, PREFIX, strlen (PREFIX)) == 0)
        m += strlen (PREFIX);
      return pr_policy_perr (err, "%s: %s", path, m);
    }
  return 0;
}

static const struct pr_phase_policy *
phase_table (const struct pr_policy *p, enum pr_phase phase)
{
  switch (phase)
    {
    case PR_PHASE_AGENT:
      return &p->agent;
    case PR_PHASE_VERIFIER:
      return &p->verifier;
    case PR_PHASE_SETUP:
    default:
      return NULL; /* setup has no network table of its own */
    }
}

/* The table whose network_mode applies to a phase: its own, else the
 * environment table's; NULL when neither sets one (mode none). */
static const struct pr_phase_policy *
net_table (const struct pr_policy *p, enum pr_phase phase)
{
  const struct pr_phase_policy *t = phase_table (p, phase);
  if (t && t->network_mode != PR_NET_UNSET)
    return t;
  if (p->environment.network_mode != PR_NET_UNSET)
    return &p->environment;
  return NULL;
}

enum pr_net_mode
pr_policy_net_mode (const struct pr_policy *p, enum pr_phase phase)
{
  const struct pr_phase_policy *t = net_table (p, phase);
  return t ? t->network_mode : PR_NET_NONE;
}

char *const *
pr_policy_allowed_hosts (const struct pr_policy *p, enum pr_phase phase)
{
  const struct pr_phase_policy *t = net_table (p, phase);
  return t ? t->allowed_hosts : NULL;
}

const uint16_t *
pr_policy_allowed_ports (const struct pr_policy *p, enum pr_phase phase, size_t *n)
{
  const struct pr_phase_policy *t = net_table (p, phase);
  *n = t ? t->n_allowed_ports : 0;
  return t ? t->allowed_ports : NULL;
}

bool
pr_policy_env_dropped (const struct pr_policy *p, const char *name)
{
  if (p == NULL || p->drop_env == NULL || name == NULL)
    return false;
  for (size_t i = 0; p->drop_env[i]; i++)
    if (fnmatch (p->drop_env[i], name, 0) == 0)
      return true;
  return false;
}

const char *
pr_net_mode_name (enum pr_net_mode m)
{
  switch (m)
    {
    case PR_NET_NONE:
      return "no-network";
    case PR_NET_ALLOWLIST:
      return "allowlist";
    case PR_NET_PUBLIC:
      return "public";
    case PR_NET_UNSET:
    default:
      return "unset";
    }
}

const char *
pr_phase_name (enum pr_phase ph)
{
  switch (ph)
    {
    case PR_PHASE_AGENT:
      return "agent";
    case PR_PHASE_SETUP:
      return "setup";
    case PR_PHASE_VERIFIER:
      return "verifier";
    default:
      return "unknown";
    }
}

/* JSON output.  yajl_gen only fails on misuse or out-of-memory. */
static void
gstr (yajl_gen g, const char *s)
{
  if (s == NULL)
    yajl_gen_null (g);
  else
    yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static void
gstrv (yajl_gen g, char *const *v)
{
  yajl_gen_array_open (g);
  for (size_t i = 0; v && v[i]; i++)
    gstr (g, v[i]);
  yajl_gen_array_close (g);
}

/* One phase table with its effective mode and the hosts that go with it,
 * so the output is a complete policy that parses back to the same
 * effective behaviour. */
static void
gen_table (yajl_gen g, const char *name, const struct pr_phase_policy *t, enum pr_net_mode mode, char *const *hosts,
           const uint16_t *ports, size_t n_ports)
{
  gstr (g, name);
  yajl_gen_map_open (g);
  gstr (g, "user");
  gstr (g, t->user);
  gstr (g, "env");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < t->n_env; i++)
    {
      gstr (g, t->env[i].key);
      gstr (g, t->env[i].value);
    }
  yajl_gen_map_close (g);
  gstr (g, "network_mode");
  gstr (g, pr_net_mode_name (mode));
  gstr (g, "allowed_hosts");
  gstrv (g, mode == PR_NET_ALLOWLIST ? hosts : NULL);
  /* Only when it widens the default 80 and 443, so a policy without it
   * reads as before. */
  if ((mode == PR_NET_ALLOWLIST || mode == PR_NET_PUBLIC) && n_ports > 0)
    {
      gstr (g, "allowed_ports");
      yajl_gen_array_open (g);
      for (size_t i = 0; i < n_ports; i++)
        yajl_gen_integer (g, ports[i]);
      yajl_gen_array_close (g);
    }
}

/* The verifier table's keys after its network ones (agent_processes,
 * resources, base, base_paths, mounts), into the open verifier map. */
static void
gen_verifier_keys (yajl_gen g, const struct pr_policy *p)
{
  /* Only when not the default, so a policy without it reads as before. */
  if (p->agent_processes != PR_AGENT_PROCS_KEEP)
    {
      gstr (g, "agent_processes");
      gstr (g, p->agent_processes == PR_AGENT_PROCS_FREEZE ? "freeze" : "kill");
    }
  if (p->verifier_memory || p->verifier_pids)
    {
      gstr (g, "resources");
      yajl_gen_map_open (g);
      if (p->verifier_memory)
        {
          gstr (g, "memory");
          yajl_gen_integer (g, p->verifier_memory);
        }
      if (p->verifier_pids)
        {
          gstr (g, "pids");
          yajl_gen_integer (g, p->verifier_pids);
        }
      yajl_gen_map_close (g);
    }
  if (p->base != PR_BASE_ROLLOUT)
    {
      gstr (g, "base");
      gstr (g, "image");
    }
  if (p->base_paths)
    {
      gstr (g, "base_paths");
      gstrv (g, p->base_paths);
    }
  gstr (g, "mounts");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    {
      yajl_gen_map_open (g);
      gstr (g, "source");
      gstr (g, p->verifier_mounts[i].source);
      gstr (g, "destination");
      gstr (g, p->verifier_mounts[i].destination);
      gstr (g, "readonly");
      yajl_gen_bool (g, p->verifier_mounts[i].readonly);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

/* "peers": [{name, port, target "tcp:HOST:PORT"}], IPv6 hosts bracketed. */
static void
gen_peers (yajl_gen g, const struct pr_policy *p)
{
  gstr (g, "peers");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < p->n_peers; i++)
    {
      const struct pr_peer *pe = &p->peers[i];
      yajl_gen_map_open (g);
      gstr (g, "name");
      gstr (g, pe->name);
      gstr (g, "port");
      yajl_gen_integer (g, pe->port);
      gstr (g, "target");
      _cleanup_free_ char *t = strchr (pe->target_host, ':')
                                   ? xasprintf ("tcp:[%s]:%u", pe->target_host, pe->target_port)
                                   : xasprintf ("tcp:%s:%u", pe->target_host, pe->target_port);
      gstr (g, t);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

void
pr_policy_gen (yajl_gen g, const struct pr_policy *p)
{
  yajl_gen_map_open (g);
  gstr (g, "version");
  yajl_gen_integer (g, p->version);

  enum pr_net_mode em = p->environment.network_mode != PR_NET_UNSET ? p->environment.network_mode : PR_NET_NONE;
  gen_table (g, "environment", &p->environment, em, p->environment.allowed_hosts, p->environment.allowed_ports,
             p->environment.n_allowed_ports);
  yajl_gen_map_close (g);
  size_t np;
  const uint16_t *ports = pr_policy_allowed_ports (p, PR_PHASE_AGENT, &np);
  gen_table (g, "agent", &p->agent, pr_policy_net_mode (p, PR_PHASE_AGENT),
             pr_policy_allowed_hosts (p, PR_PHASE_AGENT), ports, np);
  yajl_gen_map_close (g);
  ports = pr_policy_allowed_ports (p, PR_PHASE_VERIFIER, &np);
  gen_table (g, "verifier", &p->verifier, pr_policy_net_mode (p, PR_PHASE_VERIFIER),
             pr_policy_allowed_hosts (p, PR_PHASE_VERIFIER), ports, np);
  gen_verifier_keys (g, p);
  yajl_gen_map_close (g);

  gstr (g, "hide");
  gstrv (g, p->hide);
  gen_peers (g, p);
  gstr (g, "drop_env");
  gstrv (g, p->drop_env);
  if (p->has_phase_secret)
    {
      char hex[2 * PR_PHASE_SECRET_LEN + 1];
      for (size_t i = 0; i < PR_PHASE_SECRET_LEN; i++)
        snprintf (hex + 2 * i, 3, "%02x", p->phase_secret_sha256[i]);
      gstr (g, "phase_secret_sha256");
      gstr (g, hex);
    }
  /* Only when given, so the default reads back as the default (and a
   * policy without it as before). */
  if (p->transparent != PR_TRANSPARENT_DEFAULT)
    {
      gstr (g, "network");
      yajl_gen_map_open (g);
      gstr (g, "transparent");
      yajl_gen_bool (g, p->transparent == PR_TRANSPARENT_ON);
      yajl_gen_map_close (g);
    }
  yajl_gen_map_close (g);
}

char *
pr_policy_to_json (const struct pr_policy *p)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  pr_policy_gen (g, p);
  return pr_json_gen_finish (g);
}

static void
free_phase (struct pr_phase_policy *ph)
{
  free (ph->user);
  for (size_t i = 0; i < ph->n_env; i++)
    {
      free (ph->env[i].key);
      free (ph->env[i].value);
    }
  free (ph->env);
  pr_strv_free (ph->allowed_hosts);
  free (ph->allowed_ports);
}

void
pr_policy_free (struct pr_policy *p)
{
  if (p == NULL)
    return;
  free_phase (&p->environment);
  free_phase (&p->agent);
  free_phase (&p->verifier);
  for (size_t i = 0; i < p->n_verifier_mounts; i++)
    {
      free (p->verifier_mounts[i].source);
      free (p->verifier_mounts[i].destination);
    }
  free (p->verifier_mounts);
  pr_strv_free (p->hide);
  pr_strv_free (p->base_paths);
  for (size_t i = 0; i < p->n_peers; i++)
    {
      free (p->peers[i].name);
      free (p->peers[i].target_host);
    }
  free (p->peers);
  pr_strv_free (p->drop_env);
  free (p);
}
