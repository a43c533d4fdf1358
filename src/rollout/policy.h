/* policy.h - the rollout policy: the value of the `run.proctor.rollout`
 * annotation (inline JSON or "@/abs/path") or of `--rollout-policy FILE`.
 * Version 1; its keys are Harbor's task.toml keys (network_mode,
 * allowed_hosts, user, env), so a task.toml maps onto it table by table.
 * Reference: docs/rollout.md; SPEC section 2. */
#ifndef PROCTOR_POLICY_H
#define PROCTOR_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"
#include "../config/config.h"

#include <yajl/yajl_gen.h>

#define PR_ROLLOUT_ANNOTATION "run.proctor.rollout"

enum pr_net_mode
{
  PR_NET_UNSET = 0, /* not given in this table */
  PR_NET_NONE,      /* "no-network" or "none": no proxy, no proxy variables */
  PR_NET_ALLOWLIST, /* "allowlist": only allowed_hosts (exact or subdomain; "*" = any) */
  PR_NET_PUBLIC,    /* "public": any public host, still through the proxy */
};

enum pr_phase
{
  PR_PHASE_AGENT,
  PR_PHASE_SETUP,
  PR_PHASE_VERIFIER,
};

/* verifier.agent_processes: what happens to the agent's processes before
 * each verifier session starts (rollout/procs.h). */
enum pr_agent_processes
{
  PR_AGENT_PROCS_KEEP = 0, /* "keep" (default): they run on, services stay up */
  PR_AGENT_PROCS_FREEZE,   /* "freeze": every one stopped (SIGSTOP), pid 1 too */
  PR_AGENT_PROCS_KILL,     /* "kill": every one but pid 1 killed (SIGKILL) */
};

/* verifier.base: what the verifier's base paths (verifier.base_paths) show
 * (docs/rollout.md "The verifier's base"). */
enum pr_verifier_base
{
  PR_BASE_ROLLOUT = 0, /* "rollout" (default): the agent's live rootfs everywhere */
  PR_BASE_IMAGE,       /* "image": the base paths as the image had them at create */
};

/* network.transparent (docs/rollout.md "Transparent egress"): on unless
 * the policy turns it off.  The default and an explicit true mean the same;
 * they are kept apart so the saved policy reads back as it was written. */
enum pr_transparent
{
  PR_TRANSPARENT_DEFAULT = 0, /* not given: on */
  PR_TRANSPARENT_ON,          /* "transparent": true */
  PR_TRANSPARENT_OFF,         /* "transparent": false */
};

/* verifier.base_paths when the policy gives none. */
extern const char *const pr_policy_default_base_paths[];

struct pr_phase_policy
{
  char *user;               /* "uid[:gid]" or a name from the image; NULL = process.user */
  struct pr_keyval *env;    /* K=V pairs, in the order given */
  size_t n_env;
  enum pr_net_mode network_mode;
  char **allowed_hosts;     /* NULL-terminated, lower-cased; NULL when absent */
  uint16_t *allowed_ports;  /* ports reachable besides 80 and 443; NULL when absent */
  size_t n_allowed_ports;
};

struct pr_policy_mount
{
  char *source;      /* absolute host path; must exist at create */
  char *destination; /* absolute path inside the container */
  bool readonly;
};

struct pr_peer
{
  char *name;         /* host name inside the container ("db") */
  uint16_t port;      /* port inside the container */
  char *target_host;  /* from "tcp:HOST:PORT": an IP literal or host name */
  uint16_t target_port;
};

/* Bytes of a sha256 digest: phase_secret_sha256. */
#define PR_PHASE_SECRET_LEN 32

struct pr_policy
{
  int version;                       /* 1 */
  struct pr_phase_policy environment;
  struct pr_phase_policy agent;
  struct pr_phase_policy verifier;
  struct pr_policy_mount *verifier_mounts;
  size_t n_verifier_mounts;
  char **hide;                       /* NULL-terminated; default {"/tests","/logs"} */
  struct pr_peer *peers;
  size_t n_peers;
  char **drop_env;                   /* NULL-terminated glob patterns ("HUD_*"); may be NULL */
  bool has_phase_secret;             /* phase_secret_sha256 given */
  uint8_t phase_secret_sha256[PR_PHASE_SECRET_LEN]; /* sha256 of the harness's argv phase secret */
  enum pr_agent_processes agent_processes; /* verifier.agent_processes */
  /* verifier.resources: the budget of the verifier and setup sessions'
   * own cgroup (rollout/budget.h).  0 = not given (the default applies),
   * -1 = no limit ("max"), else bytes of memory / a number of tasks. */
  int64_t verifier_memory;
  int64_t verifier_pids;
  enum pr_verifier_base base;        /* verifier.base */
  char **base_paths;                 /* verifier.base_paths, NULL-terminated, normalised;
                                      * NULL = pr_policy_default_base_paths */
  enum pr_transparent transparent;   /* network.transparent (default: on) */
};

/* Parses and validates a policy document (len bytes).  Errors (errnum 0,
 * one line naming the field, prefixed "rollout policy: "): malformed JSON,
 * unknown keys at any level, wrong types, version != 1, unknown
 * network_mode, allowed_hosts entries that are not host names or "*",
 * allowed_ports entries that are not integers 1-65535, allowed_hosts or
 * allowed_ports in a table whose own network_mode does not use them,
 * non-absolute mount/hide paths, a hide path that is "/" or under /proc,
 * /sys or /dev, a verifier mount source that does not exist, a peer with an
 * invalid name, port 0, a port used twice by one name, or a target not of
 * the form "tcp:HOST:PORT", duplicate verifier mount destinations, a
 * phase_secret_sha256 that is not 64 hex digits, a verifier.base other than
 * "rollout" or "image", verifier.base_paths entries that are not absolute
 * paths, are "/" or under /proc, /sys or /dev, or are listed twice. */
int pr_policy_parse (const char *data, size_t len, struct pr_policy **out, pr_error **err);

/* As pr_policy_parse, without requiring the verifier mount sources to
 * exist: for re-reading a policy that pr_policy_parse accepted at create
 * (exec, delete, `rollout status`), so that removing a mount source on the
 * host cannot stop `delete` from putting hidden paths back.  Same errors
 * otherwise. */
int pr_policy_parse_saved (const char *data, size_t len, struct pr_policy **out, pr_error **err);

/* Loads a policy from an annotation value: inline JSON, or "@/abs/path" to
 * read a file.  Errors: "@" followed by a relative path; read errors with
 * the path; then pr_policy_parse errors. */
int pr_policy_load (const char *value, struct pr_policy **out, pr_error **err);

/* The network mode a phase runs under: the phase's own table, else the
 * environment table's, else PR_NET_NONE.  The setup phase takes the
 * environment table's mode (and agent's user/env). */
enum pr_net_mode pr_policy_net_mode (const struct pr_policy *p, enum pr_phase phase);

/* The allowed_hosts list that goes with pr_policy_net_mode() for a phase
 * (the same table the mode came from).  May be NULL (= nothing allowed). */
char *const *pr_policy_allowed_hosts (const struct pr_policy *p, enum pr_phase phase);

/* The allowed_ports list that goes with pr_policy_net_mode() for a phase
 * (the same table the mode came from): *n ports, may be NULL. */
const uint16_t *pr_policy_allowed_ports (const struct pr_policy *p, enum pr_phase phase, size_t *n);

/* True when port is 80 or 443 (always reachable in allowlist and public
 * modes) or one of the n in ports.  Source: SPEC section 2 "Network". */
bool pr_policy_port_allowed (const uint16_t *ports, size_t n, uint16_t port);

/* True when host (lower-case, no trailing dot) is allowed by list: an exact
 * match, a subdomain of an entry ("a.example.com" for "example.com"), or
 * "*" in the list.  Source: SPEC section 2 "network_mode". */
bool pr_policy_host_allowed (char *const *list, const char *host);

/* True when name matches one of the drop_env glob patterns (fnmatch). */
bool pr_policy_env_dropped (const struct pr_policy *p, const char *name);

const char *pr_net_mode_name (enum pr_net_mode m);
const char *pr_phase_name (enum pr_phase ph);

/* Serialises the policy as normalised JSON (malloc'd): the policy file a
 * rollout's verifier and `rollout status` read.  Never fails (aborts when
 * memory runs out). */
char *pr_policy_to_json (const struct pr_policy *p);

/* Writes the same normalised policy as one JSON object value into g, at a
 * place where g expects a value (a map's value, an array element, the top):
 * for writers that embed the policy in a larger document (`rollout
 * status`).  Never fails; g reports misuse through its own state. */
void pr_policy_gen (yajl_gen g, const struct pr_policy *p);

void pr_policy_free (struct pr_policy *p);
static inline void pr_policy_freep (struct pr_policy **p) { if (*p) pr_policy_free (*p); }
#define _cleanup_policy_ __attribute__ ((cleanup (pr_policy_freep)))

/* The verifier's base paths: p->base_paths, or the defaults. */
const char *const *pr_policy_base_paths (const struct pr_policy *p);

#endif
