/* hooks.h - running OCI hooks (runtime-spec config.md "POSIX-platform
 * Hooks"): each hook's path is executed with its args and env, the
 * container state JSON on stdin, and killed (SIGKILL) when its timeout (in
 * seconds) passes.  A non-zero exit or a timeout is an error for prestart,
 * createRuntime, createContainer and startContainer; for poststart and
 * poststop the caller logs a warning and continues. */
#ifndef PROCTOR_HOOKS_H
#define PROCTOR_HOOKS_H

#include "../base/error.h"
#include "../config/config.h"

/* Runs every hook of the list in order, stopping at the first failure.
 * state_json: the runtime-spec state (NUL-terminated) fed on each hook's
 * stdin.  Errors: fork/exec failure (errno), "hook `PATH` exited with
 * status N", "hook `PATH` killed by signal N", "hook `PATH` timed out after
 * N seconds". The hook's stdout/stderr are inherited. */
int pr_hooks_run (const struct pr_hook_list *hooks, const char *kind_name, const char *state_json, pr_error **err);

#endif
