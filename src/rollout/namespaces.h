/* namespaces.h - the namespaces of a rollout container (SPEC section 2,
 * "Phases and identity", "Network", "Kubernetes"): what config.json's
 * linux.namespaces becomes before the container is created.
 *
 * Engines hand a rollout the namespaces they would hand any container.
 * Under Kubernetes (containerd's and CRI-O's CRI) every container of a pod
 * joins the pod sandbox's ipc, uts and network namespaces by path
 * (/proc/PAUSE/ns/...); those belong to the initial user namespace, where
 * the agent's user namespace holds no capability: it could neither mount
 * mqueue in them at create nor be joined by an exec afterwards.  A host
 * namespace (hostIPC, hostPID, hostNetwork, --ipc=host ...) would put the
 * agent among the host's processes, queues or interfaces. */
#ifndef PROCTOR_ROLLOUT_NAMESPACES_H
#define PROCTOR_ROLLOUT_NAMESPACES_H

#include "../base/error.h"
#include "../config/config.h"

/* Rewrites cfg->linux.namespaces for a rollout:
 *  - refuses a pid, ipc or network namespace that is the host's (not
 *    listed, or a path naming the runtime's own namespace: what a hostPID,
 *    hostIPC or hostNetwork pod's container gets), and a pid namespace
 *    joined by path (a pod with shareProcessNamespace), since the agent's
 *    pid 1 and /proc must be its own;
 *  - a user namespace when the engine gave none, with the identity map
 *    "0 0 4294967295" a plain root container has (uid and gid);
 *  - a fresh network namespace in place of any path (the pod's, the
 *    engine's): only lo, the egress helper is the way out;
 *  - a new ipc and uts namespace in place of a path whose namespace the
 *    container's user namespace does not own (a pod's); with no hostname
 *    in config.json, the joined uts namespace's hostname (and domainname)
 *    are copied into the config, so the agent sees the pod's name;
 *  - sysctl net.ipv4.ping_group_range (containerd 2.x sets "0 2147483647"
 *    for pods it thinks have no user namespace) clamped to the gid map,
 *    which the kernel requires of a write from inside the namespace.
 * Errors: EINVAL "rollout refused: the container would share the host's
 * ipc namespace (hostIPC, --ipc=host); a rollout needs its own pid, ipc
 * and network namespaces" (all host namespaces named at once), "rollout
 * refused: the container would join the pid namespace at `PATH` (a pod
 * with shareProcessNamespace) ..."; open/fstat/ioctl errnos of a namespace
 * path; reading the joined hostname. */
int pr_rollout_namespaces (struct pr_config *cfg, pr_error **err);

#endif
