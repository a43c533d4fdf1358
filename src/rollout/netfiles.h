/* netfiles.h - the container's resolver files as the engine made them:
 * /etc/hosts, /etc/resolv.conf and /etc/hostname.  Engines bind these from
 * the host (podman, docker, CRI: a file of the container's own), so the
 * agent's root can rewrite them, and neither the overlay nor the image
 * layers of verifier.base "image" hold them.  An agent that maps a name the
 * verifier resolves to its own loopback listener, or that adds `options
 * use-vc` to resolv.conf (the verifier's DNS then goes over TCP, which
 * transparent egress refuses), would steer the verifier.  So create saves
 * copies in the state dir, every verifier view binds them back, and the
 * tamper report names a change (docs/rollout.md, the trust model).
 * /etc/hostname is the same kind of engine bind; nothing in the resolver
 * reads it, but tools that print or compare the host name do.
 *
 * State files (in the container's state directory), per file NAME (hosts,
 * resolv.conf, hostname):
 *   rollout-etc-NAME       the copy, with the original's mode and owner;
 *                          absent: the container had no such file
 *   rollout-etc-NAME.src   the engine's bind source (host path), when the
 *                          file was an engine bind mount */
#ifndef PROCTOR_NETFILES_H
#define PROCTOR_NETFILES_H

#include <stdbool.h>

#include "../base/error.h"
#include "../config/config.h"

struct pr_verifier_view;

/* The paths handled, inside the container, NULL-terminated. */
extern const char *const pr_netfiles[];

/* Create time, before the agent runs and before any mount is made: for each
 * of pr_netfiles, copies the file as the container will see it into the
 * state dir: the source of the last bind mount cfg->mounts has at that
 * destination (a host path the engine made; opened without following a
 * symlink in its last component), else the rootfs's file (rootfd, resolved
 * with RESOLVE_IN_ROOT so no link leads onto the host).  Only regular
 * files up to 1 MiB are copied; anything else counts as absent.
 * hosts_extra (NULL or "": none) is appended to the copy of /etc/hosts:
 * the peers' lines, which the container's init appends to the live file
 * later in create (pr_network_write_hosts), so that the verifier sees them
 * and the tamper report does not count them as a change.  Errors:
 * writing the state files (errno); a bind source that cannot be read
 * (errno, naming it). */
int pr_netfiles_record (const struct pr_config *cfg, int rootfd, int state_dirfd, const char *hosts_extra,
                        pr_error **err);

/* Exec time, verifier sessions: adds to v, for each of pr_netfiles that is
 * a regular file in the live rootfs (rootfs, a host path; an absent one is
 * left alone, so the view makes no mount point in the agent's /etc), a
 * private copy of the saved file (pr_base_file_mount), or an empty file
 * when create saw none.  Errors: pr_base_file_mount's. */
int pr_netfiles_view_add (int state_dirfd, const char *rootfs, struct pr_verifier_view *v, pr_error **err);

/* Whether path was an engine bind mount at create (its source is
 * recorded).  Never fails: unreadable state reads as false. */
bool pr_netfiles_is_bind (int state_dirfd, const char *path);

/* How the live file at path (one of pr_netfiles) differs from its copy:
 * "modified", "removed", or NULL (the same, or not an engine bind: then
 * the rootfs overlay's upper dir shows a change, tamper.c).  The live file is the engine's bind source recorded at create,
 * the file the agent's writes land in.  Never fails: an unreadable source
 * reads as "removed". */
const char *pr_netfiles_change (int state_dirfd, const char *path);

#endif
