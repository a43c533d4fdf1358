/* policy_base.c - the policy's verifier.base and verifier.base_paths
 * (SPEC section 2, "A trusted base"; docs/rollout.md "The verifier's
 * base"): their checks and defaults.  Split from policy_fields.c, which
 * keeps the other fields. */
#define _GNU_SOURCE
#include "policy.h"
#include "policy-internal.h"
#include "../base/util.h"

#include <string.h>

const char *const pr_policy_default_base_paths[] = {
  "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
  "/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.cache", NULL,
};

const char *const *
pr_policy_base_paths (const struct pr_policy *p)
{
  return p->base_paths ? (const char *const *) p->base_paths : pr_policy_default_base_paths;
}

/* verifier.base: "rollout" | "image" (SPEC section 2, "A trusted base"). */
int
pr_policy_parse_base (yajl_val v, enum pr_verifier_base *out, pr_error **err)
{
  const char *s = YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
  if (s == NULL)
    return pr_policy_type_err (err, "verifier.base", "a string", v);
  if (strcmp (s, "rollout") == 0 || strcmp (s, "image") == 0)
    {
      *out = s[0] == 'i' ? PR_BASE_IMAGE : PR_BASE_ROLLOUT;
      return 0;
    }
  return pr_policy_perr (err, "verifier.base: \"%s\" must be \"rollout\" or \"image\"", s);
}

/* verifier.base_paths: absolute paths, normalised; "/" and the pseudo
 * filesystems are refused (a base of "/" would be the whole image, which
 * is not a base but a different rollout). */
int
pr_policy_parse_base_paths (yajl_val v, struct pr_policy *p, pr_error **err)
{
  if (pr_policy_get_array (v, "verifier.base_paths", err) < 0)
    return -1;
  size_t n = YAJL_GET_ARRAY (v)->len;
  char **out = xmalloc0 ((n + 1) * sizeof (char *));
  pr_strv_free (p->base_paths);
  p->base_paths = out;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (v)->values[i];
      _cleanup_free_ char *f = xasprintf ("verifier.base_paths[%zu]", i);
      if (!YAJL_IS_STRING (e))
        return pr_policy_type_err (err, f, "a string", e);
      const char *raw = YAJL_GET_STRING (e), *why = NULL;
      _cleanup_free_ char *path = pr_policy_normalise_abs (raw, &why);
      if (path == NULL)
        return pr_policy_perr (err, "%s: \"%s\" %s", f, raw, why);
      if (strcmp (path, "/") == 0)
        return pr_policy_perr (err, "%s: \"/\" cannot be a base path", f);
      const char *pseudo = pr_policy_pseudo_fs_prefix (path);
      if (pseudo)
        return pr_policy_perr (err, "%s: \"%s\" is under %s, which cannot be a base path", f, raw, pseudo);
      for (size_t j = 0; j < i; j++)
        if (strcmp (out[j], path) == 0)
          return pr_policy_perr (err, "%s: \"%s\" is listed twice (verifier.base_paths[%zu])", f, raw, j);
      out[i] = steal_pointer (&path);
    }
  return 0;
}

