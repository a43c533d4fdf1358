/* create-internal.h - what the runtime side of create (container.c) and
 * the container side (init.c: stage 1 and the container's init) share:
 * the create context, filled by the runtime before it forks. */
#ifndef PROCTOR_CREATE_INTERNAL_H
#define PROCTOR_CREATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "child.h"
#include "container.h"
#include "../cgroup/manager.h"
#include "../config/config.h"
#include "../rollout/rollout.h"

struct create_ctx
{
  const struct pr_global *g;
  const struct pr_create_opts *o;
  struct pr_config *cfg;
  char *config_text;
  size_t config_len;
  char *bundle;
  char *rootfs;
  int state_dirfd;     /* holds the create lock (flock is per open file) */
  int fifo_dirfd;      /* unlocked O_PATH fd of the same dir, for the init */
  bool state_created;
  int *ns_fds;
  struct pr_child_link link; /* sync pair and console fds (child.h) */
  struct pr_cgroup_manager cg; /* the container's cgroup, whichever driver */
  pid_t stage1;
  pid_t init_pid;
  int new_flags;
  char *state_json;    /* runtime-spec state, given to hooks */
  struct pr_rollout *rollout; /* non-NULL for a rollout container */
  int listen_fds;      /* socket-activation fds passed through (LISTEN_FDS) */
  int *bind_fds;       /* stage 1's bind source clones (idmount.h), or NULL */
  int *dev_fds;        /* stage 1's device nodes for a user namespace
                          (devices.h pr_devices_open), or NULL */
  bool nested_pidns;   /* a rollout: outer init + agent pid namespace (rollout/procs.h) */
  pid_t agent_init;    /* then the container process's host pid, else init_pid */
  int seccomp_listener; /* connected listenerPath socket (host side), or -1 */
  int network_ready;   /* the egress helper's readiness pipe while it starts, or -1 */
};

/* Stage 1 of create, in the forked child: joins and creates the
 * namespaces (talking to the runtime over c->link.sync_child), clones the
 * container's init with CLONE_PARENT and reports its pid.  The init sets
 * up the rootfs and the process and waits on exec.fifo for `start`.
 * Never returns: errors are sent to the runtime as PR_SYNC_ERROR. */
void pr_create_stage1 (struct create_ctx *c) __attribute__ ((noreturn));

#endif
