/* rollout.h - what turns a container into a graded rollout (SPEC section
 * 2): the create-time rewrite of config.json (agent user namespace, fresh
 * network namespace, agent identity and environment), hidden paths moved
 * out of the rootfs, the per-container rollout state, and the exec-time
 * choice of phase.
 *
 * Rollout state lives in the container's state directory:
 *   rollout-policy.json   the policy text as given (annotation or file)
 *   rollout-phase         "agent" or "verifier": the default for plain execs
 *   rollout-engine-user   "UID:GID" the engine gave as process.user
 *   rollout-config-phase  the PROCTOR_PHASE values config.json's env carried
 *                         at create (NUL-separated); absent when none
 *   rollout-hidden/N      what hide[N] held in the image, moved out at create
 */
#ifndef PROCTOR_ROLLOUT_H
#define PROCTOR_ROLLOUT_H

#include <stdbool.h>
#include <sys/types.h>

#include "../linux/identity.h"
#include "phase.h"
#include "policy.h"
#include "../base/error.h"
#include "../config/config.h"

struct pr_rollout
{
  struct pr_policy *policy;
  char *policy_text;
  int state_dirfd;        /* borrowed */
  char *rootfs;           /* absolute host path */
  enum pr_phase default_phase;
  uint32_t engine_uid;    /* process.user the engine asked for, before the */
  uint32_t engine_gid;    /* agent table's user replaced it */
  char **config_phase;    /* PROCTOR_PHASE values the container's env had */
  size_t n_config_phase;  /* (inherited by every exec, so never a choice) */
};

/* Whether cfg is a Kubernetes pod's sandbox (pause) container: annotation
 * io.kubernetes.cri.container-type (containerd) or
 * io.kubernetes.cri-o.ContainerType (CRI-O) is "sandbox".  With CRI
 * pod_annotations the pause container carries the pod's annotations too;
 * it holds the pod's namespaces and is never a rollout. */
bool pr_rollout_is_pod_sandbox (const struct pr_config *cfg);

/* The policy source for a container: NULL for a pod sandbox
 * (pr_rollout_is_pod_sandbox), else the run.proctor.rollout annotation,
 * else the --rollout-policy file (as "@FILE"), else NULL (not a rollout).
 * The returned string is malloc'd. */
char *pr_rollout_policy_source (const struct pr_config *cfg, const char *policy_file);

/* Create time, before any namespace exists: loads and validates the policy
 * (source as from pr_rollout_policy_source), checks its users exist in the
 * image, and rewrites cfg: the namespaces of pr_rollout_namespaces
 * (namespaces.h: host namespaces refused, a user namespace with an
 * identity map "0 0 4294967295" when the engine gave none, a fresh
 * network namespace in place of any path the engine gave, private ipc
 * and uts for a pod's); the agent's user,
 * HOME and layered environment (environment.env, then agent.env; drop_env
 * and PROCTOR_* removed; CAP_NET_RAW and CAP_NET_ADMIN out of every
 * capability set of the container process).  Writes rollout-policy.json and rollout-phase, and
 * moves hide[] paths the image has into rollout-hidden/.  Errors: policy
 * errors; "rollout policy: agent.user: unknown user ..."; the refusals of
 * pr_rollout_namespaces ("rollout refused: ... host's ipc namespace ...");
 * I/O errors moving hidden paths (which are then put back). */
int pr_rollout_create (const char *source, struct pr_config *cfg, const char *rootfs, int state_dirfd,
                       struct pr_rollout **out, pr_error **err);

/* Puts hidden paths back into the rootfs (delete, or a failed create).
 * Missing stash entries are fine.  Errors: I/O errnos with the path;
 * ENOENT "open rootfs ..." when the rootfs is gone, after the stash was
 * removed (nothing is left to put back into). */
int pr_rollout_restore_hidden (int state_dirfd, const char *rootfs, pr_error **err);

/* Loads the rollout state of an existing container; *out = NULL when the
 * container is not a rollout.  Errors: unreadable or invalid state. */
int pr_rollout_load (int state_dirfd, const char *rootfs, struct pr_rollout **out, pr_error **err);

/* Exec time: decides the phase from the exec request (phase.h): the
 * `proctor-phase PHASE SECRET -- COMMAND...` argv switch when the policy
 * has phase_secret_sha256 (the prefix is removed from p->args), else
 * PROCTOR_PHASE=agent|setup|verifier in p->env unless the value is one the
 * container's config env carried at create (rollout-config-phase: image
 * ENV or pod env, which engines copy into every exec), else the
 * container's default phase.  Then rewrites p for it: the phase's user
 * (when the exec did not ask for another one than the engine's container
 * user) with HOME, the layered env (environment.env, then the phase
 * table's env; verifier.env for the verifier), drop_env and PROCTOR_*
 * removed; for agent and setup sessions CAP_NET_RAW and CAP_NET_ADMIN
 * taken out of every capability set (they would reach the verifier's
 * traffic in the shared network namespace).  Errors: those of pr_phase_from_argv (no secret in the policy,
 * malformed prefix, wrong secret, unknown phase) and pr_phase_from_env
 * (unknown PROCTOR_PHASE value); unknown user in the image. */
int pr_rollout_exec_prepare (const struct pr_rollout *r, struct pr_process *p, enum pr_phase *phase_out,
                             pr_error **err);

/* Sets the default phase for later plain execs ("proctor rollout phase").
 * Errors: write errno. */
int pr_rollout_set_phase (int state_dirfd, enum pr_phase phase, pr_error **err);

void pr_rollout_free (struct pr_rollout *r);
static inline void pr_rollout_freep (struct pr_rollout **r) { if (*r) pr_rollout_free (*r); }
#define _cleanup_rollout_ __attribute__ ((cleanup (pr_rollout_freep)))

#endif
