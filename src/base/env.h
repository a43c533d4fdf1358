/* env.h - process environments as NULL-terminated vectors of "KEY=VALUE"
 * strings (runtime-spec config.md "process.env", environ(7)): looking a
 * variable up, setting, overriding and removing one.  Used by exec's --env,
 * the init's HOME and PATH, and the rollout's per-phase variables. */
#ifndef PROCTOR_ENV_H
#define PROCTOR_ENV_H

/* Returns the value in kv ("KEY=VALUE") when its name is exactly key
 * (the text after the first '='), or NULL when kv names another variable
 * or has no '=' right after key.  "KEYX=1" and "KEY" are not key's. */
const char *pr_env_entry_value (const char *kv, const char *key);

/* Returns the value of the first entry of env (may be NULL) named key, or
 * NULL when there is none; it points into env.  A duplicate later in the
 * vector is not seen, as with getenv(3) on most libcs. */
const char *pr_env_get (char *const *env, const char *key);

/* Sets key to value: replaces the first entry named key, or appends
 * "KEY=VALUE" when there is none.  env may be NULL (a new vector is
 * made).  Returns the vector, which may have moved (the old pointer is
 * then invalid); aborts when memory runs out. */
char **pr_env_set (char **env, const char *key, const char *value);

/* As pr_env_set with the name and value given as one "KEY=VALUE" string
 * (runc exec --env): the name is what precedes the first '='; a kv
 * without '=' is its own name and replaces or is appended as it is. */
char **pr_env_override (char **env, const char *kv);

/* Removes every entry named key, freeing it and keeping the others in
 * their order.  Returns env (NULL stays NULL). */
char **pr_env_unset (char **env, const char *key);

#endif
