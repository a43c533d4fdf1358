/* env.c - "KEY=VALUE" environment vectors (see env.h). */
#include "env.h"
#include "util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* True when entry names the variable whose name is the first kl bytes of
 * key: those bytes, then '='. */
static bool
entry_is (const char *entry, const char *key, size_t kl)
{
  return strncmp (entry, key, kl) == 0 && entry[kl] == '=';
}

const char *
pr_env_entry_value (const char *kv, const char *key)
{
  size_t kl = strlen (key);
  return entry_is (kv, key, kl) ? kv + kl + 1 : NULL;
}

const char *
pr_env_get (char *const *env, const char *key)
{
  for (size_t i = 0; env && env[i]; i++)
    {
      const char *v = pr_env_entry_value (env[i], key);
      if (v)
        return v;
    }
  return NULL;
}

/* Replaces the first entry named by the kl bytes of key with kv (taking
 * it), or appends kv. */
static char **
replace_or_append (char **env, const char *key, size_t kl, char *kv)
{
  for (size_t i = 0; env && env[i]; i++)
    if (entry_is (env[i], key, kl))
      {
        free (env[i]);
        env[i] = kv;
        return env;
      }
  env = pr_strv_append (env, kv);
  free (kv);
  return env;
}

char **
pr_env_set (char **env, const char *key, const char *value)
{
  return replace_or_append (env, key, strlen (key), xasprintf ("%s=%s", key, value));
}

char **
pr_env_override (char **env, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t kl = eq ? (size_t) (eq - kv) : strlen (kv);
  return replace_or_append (env, kv, kl, xstrdup (kv));
}

char **
pr_env_unset (char **env, const char *key)
{
  if (env == NULL)
    return NULL;
  size_t kl = strlen (key), w = 0;
  for (size_t i = 0; env[i]; i++)
    {
      if (entry_is (env[i], key, kl))
        free (env[i]);
      else
        env[w++] = env[i];
    }
  env[w] = NULL;
  return env;
}
