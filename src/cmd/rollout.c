/* rollout.c - `proctor rollout status|phase|log ID`: a rollout's phase,
 * policy, hidden paths and egress decisions (SPEC section 2). */
#define _GNU_SOURCE
#include "cmd.h"
#include "../base/json.h"
#include "../base/util.h"
#include "../lifecycle/state.h"
#include "../rollout/hidden.h"
#include "../rollout/network.h"
#include "../rollout/rollout.h"
#include "../rollout/tamper.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#define GS(g, s) yajl_gen_string (g, (const unsigned char *) (s), strlen (s))

static int
no_flags (int key, const char *arg, void *data, pr_error **err)
{
  return 0;
}

static int
load (struct pr_global *g, const char *id, bool exclusive, struct pr_state **st, struct pr_rollout **r,
      pr_error **err)
{
  if (pr_state_load (g->root, id, exclusive, st, err) < 0)
    return -1;
  if (pr_rollout_load ((*st)->state_dirfd, (*st)->rootfs, r, err) < 0)
    return -1;
  if (*r == NULL)
    return pr_error_invalid (err, "container `%s` is not a rollout (no %s annotation)", id, PR_ROLLOUT_ANNOTATION);
  return 0;
}

/* "egress": {"reachable": [...]}: the operator's reachable ranges the
 * helper was started with (PROCTOR_EGRESS_REACHABLE at create; [] when
 * none or no helper). */
static void
gen_egress (yajl_gen g, const struct pr_state *st)
{
  _cleanup_free_ char *text = NULL;
  GS (g, "egress");
  yajl_gen_map_open (g);
  GS (g, "reachable");
  yajl_gen_array_open (g);
  if (pr_read_file_at (st->state_dirfd, PR_EGRESS_REACHABLE, &text, NULL, NULL) == 0 && text)
    {
      char *rest = text, *t;
      while ((t = strsep (&rest, ",\n")) != NULL)
        if (*t)
          GS (g, t);
    }
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
}

/* "hidden": [{"path": P, "in_image": B}, ...]: each hide path, and whether
 * the image had something there (its stash entry in the state dir). */
static void
gen_hidden (yajl_gen g, const struct pr_state *st, const struct pr_policy *p)
{
  _cleanup_close_ int stash = openat (st->state_dirfd, PR_HIDDEN_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
  GS (g, "hidden");
  yajl_gen_array_open (g);
  for (size_t i = 0; p->hide && p->hide[i]; i++)
    {
      char name[32];
      struct stat sb;
      snprintf (name, sizeof name, "%zu", i);
      bool stashed = stash >= 0 && fstatat (stash, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
      yajl_gen_map_open (g);
      GS (g, "path");
      GS (g, p->hide[i]);
      GS (g, "in_image");
      yajl_gen_bool (g, stashed);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
}

/* Prints the status document.  Generated with yajl, never assembled with
 * printf: hide paths and user names come from the policy and may hold any
 * character, '"' and '\\' included (RFC 8259 section 7 escaping). */
static int
print_status (const struct pr_state *st, const struct pr_rollout *r, pr_error **err)
{
  const struct pr_policy *p = r->policy;
  static const enum pr_phase phases[] = { PR_PHASE_AGENT, PR_PHASE_SETUP, PR_PHASE_VERIFIER };
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open (g);
  GS (g, "id");
  GS (g, st->id);
  GS (g, "status");
  GS (g, pr_state_status (st));
  GS (g, "phase");
  GS (g, pr_phase_name (r->default_phase));
  GS (g, "network");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < PR_ARRAY_SIZE (phases); i++)
    {
      GS (g, pr_phase_name (phases[i]));
      GS (g, pr_net_mode_name (pr_policy_net_mode (p, phases[i])));
    }
  yajl_gen_map_close (g);
  gen_egress (g, st);
  GS (g, "users");
  yajl_gen_map_open (g);
  GS (g, "agent");
  GS (g, p->agent.user ? p->agent.user : "(container user)");
  GS (g, "verifier");
  GS (g, p->verifier.user ? p->verifier.user : "(container user)");
  yajl_gen_map_close (g);
  gen_hidden (g, st, p);
  pr_tamper_gen (g, st->state_dirfd, p);
  GS (g, "policy");
  pr_policy_gen (g, p);
  yajl_gen_map_close (g);
  _cleanup_free_ char *text = pr_json_gen_finish_line (g);
  if (fputs (text, stdout) == EOF || fflush (stdout) != 0)
    return pr_error_set (err, errno, "write the status");
  return 0;
}

static int
run_status (struct pr_global *g, const char *id, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_rollout_ struct pr_rollout *r = NULL;
  if (load (g, id, false, &st, &r, err) < 0)
    return -1;
  return print_status (st, r, err);
}

static int
run_phase (struct pr_global *g, const char *id, const char *name, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_rollout_ struct pr_rollout *r = NULL;
  enum pr_phase ph;
  if (strcmp (name, "agent") == 0)
    ph = PR_PHASE_AGENT;
  else if (strcmp (name, "verifier") == 0)
    ph = PR_PHASE_VERIFIER;
  else
    return pr_error_invalid (err, "unknown phase `%s` (expected agent or verifier)", name);
  if (load (g, id, true, &st, &r, err) < 0)
    return -1;
  return pr_rollout_set_phase (st->state_dirfd, ph, err);
}

/* Copies a state file to stdout in pieces (the log is bounded, but never
 * read whole into memory).  A missing file is no error. */
static int
stream_file (int dirfd, const char *name, pr_error **err)
{
  _cleanup_close_ int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  char buf[65536];
  if (fd < 0)
    return errno == ENOENT ? 0 : pr_error_set (err, errno, "open %s", name);
  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return pr_error_set (err, errno, "read %s", name);
      if (n == 0)
        return 0;
      if (fwrite (buf, 1, (size_t) n, stdout) != (size_t) n)
        return pr_error_set (err, errno, "write the log");
    }
}

/* The decision lines (egress.log), then one totals line per phase
 * (egress.totals): see docs/rollout.md "Egress log". */
static int
run_log (struct pr_global *g, const char *id, pr_error **err)
{
  _cleanup_state_ struct pr_state *st = NULL;
  _cleanup_rollout_ struct pr_rollout *r = NULL;
  if (load (g, id, false, &st, &r, err) < 0)
    return -1;
  if (stream_file (st->state_dirfd, PR_EGRESS_LOG, err) < 0 || stream_file (st->state_dirfd, PR_EGRESS_TOTALS, err) < 0)
    return -1;
  return fflush (stdout) == 0 ? 0 : pr_error_set (err, errno, "write the log");
}

static int
run_rollout (struct pr_global *g, int argc, char **argv)
{
  pr_error *err = NULL;
  int first = pr_cmd_parse (&pr_cmd_rollout, argc, argv, no_flags, NULL, &err);
  if (first == -2)
    return 0;
  if (first < 0 || pr_cmd_need_args (&pr_cmd_rollout, argc, first, 2, 3, &err) < 0)
    return pr_cmd_fail (err);
  const char *sub = argv[first], *id = argv[first + 1];
  int r;
  if (strcmp (sub, "status") == 0 && argc - first == 2)
    r = run_status (g, id, &err);
  else if (strcmp (sub, "phase") == 0 && argc - first == 3)
    r = run_phase (g, id, argv[first + 2], &err);
  else if (strcmp (sub, "log") == 0 && argc - first == 2)
    r = run_log (g, id, &err);
  else
    r = pr_error_invalid (&err, "usage: proctor rollout status|log ID, or proctor rollout phase ID agent|verifier");
  return r < 0 ? pr_cmd_fail (err) : 0;
}

static const struct pr_opt opts[] = { { NULL } };

const struct pr_command pr_cmd_rollout = {
  "rollout", "status|log <container-id> | phase <container-id> agent|verifier",
  "show a rollout's phase, policy and egress log, or set the phase of later execs", opts, run_rollout,
};
