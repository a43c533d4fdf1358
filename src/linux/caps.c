/* caps.c - owns the container process's capability sets: name lookup and
 * validation, the bounding-set drop done while still root, and the final
 * effective/permitted/inheritable/ambient sets applied after setuid.
 * Everything goes through libcap so the kernel's capability ABI version is
 * libcap's problem, not ours. */
#define _GNU_SOURCE
#include "caps.h"

#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

int
pr_cap_from_name (const char *name)
{
  cap_value_t v;

  /* libcap also accepts bare numbers and lower case; the runtime-spec only
   * has "CAP_" names, and accepting "12" would hide typos in config.json. */
  if (name == NULL || strncmp (name, "CAP_", 4) != 0 || name[4] == '\0')
    return -1;
  if (cap_from_name (name, &v) < 0)
    return -1;
  return (int) v;
}

/* Resolves one name for use.  Returns the capability number, or -2 when the
 * name is unknown (to libcap, or not a "CAP_" name) or libcap knows it but
 * the running kernel does not: the caller skips it.  runtime-spec 1.1+
 * config.md "capabilities": a value that cannot be mapped to a kernel
 * interface MUST be logged as a warning and SHOULD NOT fail the container,
 * so a config written for a newer kernel keeps working, as with runc.  The
 * warning is given once, at validation (warn); later passes stay quiet. */
static int
resolve_cap (const char *name, bool warn, pr_error **err)
{
  int v = pr_cap_from_name (name);

  (void) err;
  if (v < 0)
    {
      if (warn)
        pr_warn ("unknown capability `%s`, ignored", name ? name : "");
      return -2;
    }
  if (v >= cap_max_bits ())
    {
      if (warn)
        pr_warn ("capability `%s` is not supported by the running kernel, ignored", name);
      else
        pr_debug ("capability `%s` is not supported by the running kernel, ignored", name);
      return -2;
    }
  return v;
}

/* The upper-case "CAP_X" name of a capability number for messages; buf
 * must hold 64 bytes.  cap_to_name() memory belongs to libcap (cap_free). */
static const char *
cap_name (unsigned v, char *buf)
{
  char *n = cap_to_name ((cap_value_t) v);
  size_t i = 0;

  for (; n && n[i] && i < 63; i++)
    buf[i] = (n[i] >= 'a' && n[i] <= 'z') ? n[i] - 'a' + 'A' : n[i];
  buf[i] = '\0';
  if (n)
    cap_free (n);
  return buf;
}

int
pr_caps_validate (const struct pr_capabilities *caps, pr_error **err)
{
  char **sets[] = { caps->bounding, caps->effective, caps->inheritable, caps->permitted, caps->ambient };

  for (size_t s = 0; s < PR_ARRAY_SIZE (sets); s++)
    for (char **n = sets[s]; n && *n; n++)
      if (resolve_cap (*n, true, err) == -1)
        return -1;
  return 0;
}

/* Fills mask[cap] = true for each usable name of a set. */
static int
names_to_mask (char **names, bool *mask, pr_error **err)
{
  for (char **n = names; n && *n; n++)
    {
      int v = resolve_cap (*n, false, err);
      if (v == -1)
        return -1;
      if (v >= 0)
        mask[v] = true;
    }
  return 0;
}

int
pr_caps_prepare (const struct pr_capabilities *caps, pr_error **err)
{
  unsigned max = cap_max_bits ();
  _cleanup_free_ bool *keep = xmalloc0 (max * sizeof (bool));

  if (names_to_mask (caps->bounding, keep, err) < 0)
    return -1;

  /* Keep the permitted set across the coming setuid(); pr_caps_apply()
   * then trims it to exactly the configured set. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return pr_error_set (err, errno, "prctl PR_SET_KEEPCAPS");

  for (unsigned c = 0; c < max; c++)
    {
      if (keep[c])
        continue;
      /* Already gone: dropping again would need CAP_SETPCAP for nothing. */
      if (cap_get_bound ((cap_value_t) c) != 1)
        continue;
      if (cap_drop_bound ((cap_value_t) c) < 0)
        {
          int e = errno;
          char buf[64];
          return pr_error_set (err, e, "drop capability `%s` from the bounding set", cap_name (c, buf));
        }
    }
  return 0;
}

static int
set_flag (cap_t c, cap_flag_t flag, const bool *mask, unsigned max, pr_error **err)
{
  for (unsigned v = 0; v < max; v++)
    {
      cap_value_t cv = (cap_value_t) v;
      if (mask[v] && cap_set_flag (c, flag, 1, &cv, CAP_SET) < 0)
        return pr_error_set (err, errno, "cap_set_flag");
    }
  return 0;
}

static void
cap_freep (cap_t *c)
{
  if (*c)
    cap_free (*c);
}

int
pr_caps_apply (const struct pr_capabilities *caps, pr_error **err)
{
  unsigned max = cap_max_bits ();
  _cleanup_free_ bool *eff = xmalloc0 (max * sizeof (bool));
  _cleanup_free_ bool *perm = xmalloc0 (max * sizeof (bool));
  _cleanup_free_ bool *inh = xmalloc0 (max * sizeof (bool));
  _cleanup_free_ bool *amb = xmalloc0 (max * sizeof (bool));
  __attribute__ ((cleanup (cap_freep))) cap_t c = NULL;

  if (names_to_mask (caps->effective, eff, err) < 0
      || names_to_mask (caps->permitted, perm, err) < 0
      || names_to_mask (caps->inheritable, inh, err) < 0
      || names_to_mask (caps->ambient, amb, err) < 0)
    return -1;

  c = cap_init ();
  if (c == NULL)
    return pr_error_set (err, errno, "cap_init");
  if (set_flag (c, CAP_EFFECTIVE, eff, max, err) < 0
      || set_flag (c, CAP_PERMITTED, perm, max, err) < 0
      || set_flag (c, CAP_INHERITABLE, inh, max, err) < 0)
    return -1;
  if (cap_set_proc (c) < 0)
    return pr_error_set (err, errno, "set process capabilities (capset)");

  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return pr_error_set (err, errno, "prctl PR_SET_KEEPCAPS");

  /* Whatever ambient set we inherited is not the configured one. */
  if (cap_reset_ambient () < 0 && errno != EINVAL)
    return pr_error_set (err, errno, "clear ambient capabilities");

  for (unsigned v = 0; v < max; v++)
    {
      if (!amb[v])
        continue;
      char buf[64];
      /* The kernel only allows an ambient capability that is both permitted
       * and inheritable; runc warns and goes on for such configs, and
       * engines do emit them, so do the same rather than fail the start. */
      if (!perm[v] || !inh[v])
        {
          pr_warn ("ambient capability `%s` is not both permitted and inheritable, ignored", cap_name (v, buf));
          continue;
        }
      if (cap_set_ambient ((cap_value_t) v, CAP_SET) < 0)
        {
          int e = errno;
          return pr_error_set (err, e, "raise ambient capability `%s`", cap_name (v, buf));
        }
    }
  return 0;
}
