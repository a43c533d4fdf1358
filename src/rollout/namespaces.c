/* namespaces.c - linux.namespaces of a rollout container (see
 * namespaces.h): host namespaces refused, the agent's user namespace,
 * a fresh network namespace, private ipc and uts for a pod's. */
#define _GNU_SOURCE
#include "namespaces.h"
#include "../base/util.h"
#include "../linux/namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* user_namespaces(7): ids 0..4294967294; 4294967295 is (uid_t) -1. */
#define FULL_MAP_SIZE UINT32_MAX

static struct pr_namespace *
find_ns (struct pr_config *cfg, int type)
{
  for (size_t i = 0; i < cfg->linux.n_namespaces; i++)
    if (cfg->linux.namespaces[i].type == type)
      return &cfg->linux.namespaces[i];
  return NULL;
}

static void
add_ns (struct pr_config *cfg, int type)
{
  size_t n = cfg->linux.n_namespaces;
  cfg->linux.namespaces = xrealloc (cfg->linux.namespaces, (n + 1) * sizeof (struct pr_namespace));
  cfg->linux.namespaces[n].type = type;
  cfg->linux.namespaces[n].path = NULL;
  cfg->linux.n_namespaces = n + 1;
}

static int
open_ns_path (const struct pr_namespace *ns, int *fd, pr_error **err)
{
  *fd = open (ns->path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return pr_error_set (err, errno, "open %s namespace path `%s`", pr_namespace_name (ns->type), ns->path);
  return 0;
}

/* --------------------------------------------------- host namespaces */

/* Whether the container would be in the runtime's own (the host's)
 * namespace of this type: not listed (runtime-spec: "If a namespace type
 * is not specified ... the container inherits the runtime namespace"), or
 * listed with a path naming it.  CRI gives a hostIPC, hostPID or
 * hostNetwork pod's container a path to the pause container's namespace,
 * which is the host's. */
static int
is_host_ns (struct pr_config *cfg, int type, bool *host, pr_error **err)
{
  const struct pr_namespace *ns = find_ns (cfg, type);
  *host = ns == NULL;
  if (ns == NULL || ns->path == NULL)
    return 0;
  _cleanup_close_ int fd = -1, self = -1;
  if (open_ns_path (ns, &fd, err) < 0 || pr_ns_open_pid (getpid (), type, &self, err) < 0)
    return -1;
  return pr_ns_same (fd, self, host, err);
}

static int
refuse_host_namespaces (struct pr_config *cfg, pr_error **err)
{
  static const struct
  {
    int type;
    const char *name, *pod_field, *flag;
  } kinds[] = {
    { CLONE_NEWPID, "pid", "hostPID", "--pid=host" },
    { CLONE_NEWIPC, "ipc", "hostIPC", "--ipc=host" },
    { CLONE_NEWNET, "network", "hostNetwork", "--network=host" },
  };
  char names[64] = "", fields[96] = "";
  size_t n = 0;
  for (size_t i = 0; i < PR_ARRAY_SIZE (kinds); i++)
    {
      bool host;
      if (is_host_ns (cfg, kinds[i].type, &host, err) < 0)
        return -1;
      if (!host)
        continue;
      size_t nl = strlen (names), fl = strlen (fields);
      snprintf (names + nl, sizeof names - nl, "%s%s", n ? ", " : "", kinds[i].name);
      snprintf (fields + fl, sizeof fields - fl, "%s%s, %s", n ? "; " : "", kinds[i].pod_field, kinds[i].flag);
      n++;
    }
  if (n)
    return pr_error_invalid (err,
                             "rollout refused: the container would share the host's %s namespace%s (%s); "
                             "a rollout needs its own pid, ipc and network namespaces",
                             names, n > 1 ? "s" : "", fields);
  /* Joining another container's pid namespace (the pod's, with
   * shareProcessNamespace) would make the pause process the agent's pid 1
   * and put the agent next to the other containers' processes; its /proc
   * could not even be mounted (the namespace is owned outside the agent's
   * user namespace). */
  const struct pr_namespace *pid = find_ns (cfg, CLONE_NEWPID);
  if (pid->path)
    return pr_error_invalid (err,
                             "rollout refused: the container would join the pid namespace at `%s` (a pod with "
                             "shareProcessNamespace); a rollout needs its own pid namespace",
                             pid->path);
  return 0;
}

/* ------------------------------------------------------ user, network */

/* The agent's user namespace: the engine's when it gave one, else the
 * identity map a plain root container reads in /proc/self/uid_map and
 * gid_map, "0 0 4294967295" (every id but (uid_t) -1, which the kernel
 * reserves as "no id").  A narrower map is a fingerprint an agent can read
 * (issue #15 item 7) and turns image files owned by ids above it into the
 * overflow id.  Non-root images and chown to any id work; the agent's root
 * holds capabilities only inside its own namespaces, as with any map. */
static void
ensure_user_namespace (struct pr_config *cfg)
{
  if (find_ns (cfg, CLONE_NEWUSER))
    return;
  add_ns (cfg, CLONE_NEWUSER);
  free (cfg->linux.uid_mappings);
  free (cfg->linux.gid_mappings);
  cfg->linux.uid_mappings = xmalloc0 (sizeof (struct pr_idmap));
  cfg->linux.gid_mappings = xmalloc0 (sizeof (struct pr_idmap));
  cfg->linux.uid_mappings[0] = (struct pr_idmap){ 0, 0, FULL_MAP_SIZE };
  cfg->linux.gid_mappings[0] = (struct pr_idmap){ 0, 0, FULL_MAP_SIZE };
  cfg->linux.n_uid_mappings = cfg->linux.n_gid_mappings = 1;
}

/* A fresh network namespace with only lo: any namespace the engine
 * prepared (a pod's, with its CNI interfaces and port mappings) is
 * replaced. */
static void
ensure_fresh_network (struct pr_config *cfg)
{
  struct pr_namespace *ns = find_ns (cfg, CLONE_NEWNET);
  if (ns == NULL)
    {
      add_ns (cfg, CLONE_NEWNET);
      return;
    }
  free (ns->path);
  ns->path = NULL;
}

/* ---------------------------------------------------------- ipc, uts */

/* Whether the namespace at fd is owned by the container's user namespace:
 * only when the container joins a user namespace by path (a new one owns
 * nothing that exists yet). */
static int
owned_by_container (struct pr_config *cfg, int fd, bool *owned, pr_error **err)
{
  const struct pr_namespace *user = find_ns (cfg, CLONE_NEWUSER);
  *owned = false;
  if (user == NULL || user->path == NULL)
    return 0;
  _cleanup_close_ int userfd = -1;
  if (open_ns_path (user, &userfd, err) < 0)
    return -1;
  return pr_ns_owned_by (fd, userfd, owned, err);
}

/* The pod's hostname for the private uts namespace, unless config.json
 * names one (CRI writes none for a pod's containers: they join the pause
 * container's uts namespace, where the sandbox's hostname was set). */
static int
copy_uts_names (struct pr_config *cfg, int fd, pr_error **err)
{
  if (cfg->hostname && cfg->hostname[0])
    return 0;
  _cleanup_free_ char *host = NULL, *domain = NULL;
  if (pr_ns_uts_names (fd, &host, &domain, err) < 0)
    return -1;
  free (cfg->hostname);
  cfg->hostname = steal_pointer (&host);
  /* "(none)" is the kernel's name for an unset domainname. */
  if ((cfg->domainname == NULL || cfg->domainname[0] == '\0') && domain[0] && strcmp (domain, "(none)") != 0)
    {
      free (cfg->domainname);
      cfg->domainname = steal_pointer (&domain);
    }
  return 0;
}

static int
private_namespace (struct pr_config *cfg, int type, pr_error **err)
{
  struct pr_namespace *ns = find_ns (cfg, type);
  if (ns == NULL || ns->path == NULL)
    return 0;
  _cleanup_close_ int fd = -1;
  bool owned;
  if (open_ns_path (ns, &fd, err) < 0 || owned_by_container (cfg, fd, &owned, err) < 0)
    return -1;
  if (owned)
    return 0;
  if (type == CLONE_NEWUTS && copy_uts_names (cfg, fd, err) < 0)
    return pr_error_wrap (err, "rollout: the pod's hostname");
  free (ns->path);
  ns->path = NULL;
  return 0;
}

/* ---------------------------------------------------------- sysctls */

static bool
is_ping_group_range (const char *key)
{
  static const char name[] = "net.ipv4.ping_group_range";
  for (size_t i = 0; i < sizeof name; i++)
    if (key[i] != name[i] && !(name[i] == '.' && key[i] == '/'))
      return false;
  return true;
}

/* containerd 2.x (enable_unprivileged_icmp, on by default) gives the
 * containers of every pod that is not in a user namespace it knows of
 * net.ipv4.ping_group_range = "0 2147483647".  Written from inside the
 * user namespace a rollout adds, a range with gids outside its map is
 * refused (EINVAL: the kernel converts both ends with make_kgid), so every
 * such pod would fail to start.  "Every group may ping" means every group
 * the container has: the range is clamped to the gid map's bounds ("1 0",
 * the kernel's "no group", when nothing is left).  A user namespace joined
 * by path brings no map in config.json: the value is left alone. */
static void
clamp_ping_group_range (struct pr_config *cfg)
{
  const struct pr_linux *l = &cfg->linux;
  if (l->n_gid_mappings == 0)
    return;
  uint64_t map_lo = UINT32_MAX, map_hi = 0;
  for (size_t i = 0; i < l->n_gid_mappings; i++)
    {
      const struct pr_idmap *m = &l->gid_mappings[i];
      if (m->size == 0)
        continue;
      if (m->container_id < map_lo)
        map_lo = m->container_id;
      if ((uint64_t) m->container_id + m->size - 1 > map_hi)
        map_hi = (uint64_t) m->container_id + m->size - 1;
    }
  for (size_t i = 0; i < l->n_sysctl; i++)
    {
      struct pr_keyval *kv = &l->sysctl[i];
      unsigned long lo, hi;
      char extra;
      if (!is_ping_group_range (kv->key) || sscanf (kv->value, "%lu %lu %c", &lo, &hi, &extra) != 2)
        continue; /* a malformed value fails at its write, with its own error */
      if (lo < map_lo)
        lo = map_lo;
      if (hi > map_hi)
        hi = map_hi;
      free (kv->value);
      kv->value = lo <= hi ? xasprintf ("%lu %lu", lo, hi) : xstrdup ("1 0");
    }
}

int
pr_rollout_namespaces (struct pr_config *cfg, pr_error **err)
{
  if (refuse_host_namespaces (cfg, err) < 0)
    return -1;
  /* Ownership is decided against the user namespace the container will
   * have, so the engine's choice is read before one is added. */
  if (private_namespace (cfg, CLONE_NEWIPC, err) < 0 || private_namespace (cfg, CLONE_NEWUTS, err) < 0)
    return -1;
  ensure_user_namespace (cfg);
  ensure_fresh_network (cfg);
  clamp_ping_group_range (cfg);
  return 0;
}
