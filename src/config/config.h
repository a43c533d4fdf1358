/* config.h - the OCI runtime-spec config.json (runtime-spec 1.2,
 * config.md and config-linux.md) as typed C structs.
 *
 * pr_config_load() parses with yajl's tree API and checks the type of every
 * field proctor knows: a wrong type is an error naming the field path
 * ("process.args: expected an array of strings").  Unknown fields are
 * ignored, as the runtime-spec requires for forward compatibility.
 * linux.resources is kept as the raw yajl node (cfg->linux.resources), owned
 * by cfg->tree; the cgroup code interprets it. */
#ifndef PROCTOR_CONFIG_H
#define PROCTOR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "../base/error.h"

/* GNU C predefines `linux` as 1; the runtime-spec calls the section
 * "linux", and so do we. */
#undef linux

struct pr_idmap
{
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};

struct pr_mount
{
  char *destination;
  char *source;   /* may be NULL */
  char *type;     /* may be NULL (treated as bind when options say so) */
  char **options; /* NULL-terminated, never NULL after load */
  struct pr_idmap *uid_mappings;
  size_t n_uid_mappings;
  struct pr_idmap *gid_mappings;
  size_t n_gid_mappings;
};

struct pr_rlimit
{
  char *type; /* "RLIMIT_NOFILE" */
  int resource; /* RLIMIT_* value, resolved at load; unknown name = error */
  uint64_t hard;
  uint64_t soft;
};

struct pr_user
{
  uint32_t uid;
  uint32_t gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* informational */
};

struct pr_capabilities
{
  /* Each NULL when absent from config.json (then the set is empty). */
  char **bounding;
  char **effective;
  char **inheritable;
  char **permitted;
  char **ambient;
};

struct pr_scheduler
{
  char *policy; /* "SCHED_OTHER" ... */
  int32_t nice;
  int32_t priority;
  char **flags;
  uint64_t runtime, deadline, period;
};

struct pr_process
{
  bool terminal;
  bool has_console_size;
  uint32_t console_height;
  uint32_t console_width;
  struct pr_user user;
  char **args; /* NULL-terminated */
  char *command_line; /* Windows only, ignored */
  char **env;  /* NULL-terminated, never NULL after load */
  char *cwd;
  bool has_capabilities;
  struct pr_capabilities capabilities;
  struct pr_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *selinux_label;
  bool has_scheduler;
  struct pr_scheduler scheduler;
  bool has_io_priority;
  char *io_priority_class; /* "IOPRIO_CLASS_RT" | "IOPRIO_CLASS_BE" | "IOPRIO_CLASS_IDLE" */
  int32_t io_priority;
};

struct pr_hook
{
  char *path;
  char **args; /* may be NULL */
  char **env;  /* may be NULL */
  bool has_timeout;
  int timeout; /* seconds, > 0 */
};

enum pr_hook_kind
{
  PR_HOOK_PRESTART,
  PR_HOOK_CREATE_RUNTIME,
  PR_HOOK_CREATE_CONTAINER,
  PR_HOOK_START_CONTAINER,
  PR_HOOK_POSTSTART,
  PR_HOOK_POSTSTOP,
  PR_HOOK__MAX
};

struct pr_hook_list
{
  struct pr_hook *v;
  size_t n;
};

struct pr_namespace
{
  int type;   /* CLONE_NEWUSER, CLONE_NEWNS, ... CLONE_NEWTIME */
  char *path; /* NULL = create a new one */
};

struct pr_device
{
  char *path;
  char type; /* 'c', 'b', 'u', 'p' */
  int64_t major;
  int64_t minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid;
  uint32_t uid;
  bool has_gid;
  uint32_t gid;
};

struct pr_seccomp_arg
{
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  char *op; /* "SCMP_CMP_EQ" ... */
};

struct pr_seccomp_syscall
{
  char **names;
  char *action; /* "SCMP_ACT_ERRNO" ... */
  bool has_errno_ret;
  uint32_t errno_ret;
  struct pr_seccomp_arg *args;
  size_t n_args;
};

struct pr_seccomp
{
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  char **architectures; /* "SCMP_ARCH_X86_64" ... may be NULL */
  char **flags;         /* "SECCOMP_FILTER_FLAG_LOG" ... may be NULL */
  char *listener_path;
  char *listener_metadata;
  struct pr_seccomp_syscall *syscalls;
  size_t n_syscalls;
};

struct pr_keyval
{
  char *key;
  char *value;
};

struct pr_linux
{
  struct pr_namespace *namespaces;
  size_t n_namespaces;
  struct pr_idmap *uid_mappings;
  size_t n_uid_mappings;
  struct pr_idmap *gid_mappings;
  size_t n_gid_mappings;
  struct pr_device *devices;
  size_t n_devices;
  char *cgroups_path;
  yajl_val resources; /* raw "linux.resources" object or NULL; owned by tree */
  char *rootfs_propagation;
  char **masked_paths;   /* may be NULL */
  char **readonly_paths; /* may be NULL */
  char *mount_label;
  struct pr_keyval *sysctl;
  size_t n_sysctl;
  bool has_seccomp;
  struct pr_seccomp seccomp;
  bool has_personality;
  char *personality_domain; /* "LINUX" | "LINUX32" */
  bool has_time_offsets;
  int64_t monotonic_secs;
  uint32_t monotonic_nanosecs;
  int64_t boottime_secs;
  uint32_t boottime_nanosecs;
  /* linux.personality.flags; NULL when absent (added after the original
   * layout, so it sits at the end). */
  char **personality_flags;
};

struct pr_config
{
  char *oci_version;
  char *root_path;    /* as written; may be relative to the bundle */
  bool root_readonly;
  struct pr_mount *mounts;
  size_t n_mounts;
  bool has_process;
  struct pr_process process;
  char *hostname;
  char *domainname;
  struct pr_hook_list hooks[PR_HOOK__MAX];
  struct pr_keyval *annotations;
  size_t n_annotations;
  struct pr_linux linux;
  yajl_val tree; /* the parsed document; owns linux.resources */
};

/* The offset of the first "\u0000" escape inside a JSON string of data
 * (len bytes), or -1 when there is none.  yajl_tree hands strings over as
 * C strings, so such a value would be cut at the NUL without a word
 * ("/tests\u0000/x" read as "/tests"); the parsers refuse it instead.
 * A cheap lexical scan (an escaped backslash before "u0000" is text). */
long pr_json_nul_escape (const char *data, size_t len);

/* Parses config.json text (len bytes, need not be NUL-terminated) into a
 * new *out.  Errors (errnum 0 unless noted): malformed JSON ("invalid
 * config.json: <yajl message>"), a wrong type or impossible value for any
 * known field ("<field path>: expected ..."), a missing required field
 * (ociVersion, process.args when process is present, mount destination),
 * an unknown namespace type, rlimit name, device type, or seccomp action.
 * Source: runtime-spec 1.2 config.md, config-linux.md. */
int pr_config_parse (const char *data, size_t len, struct pr_config **out, pr_error **err);

/* Reads and parses a file (see pr_config_parse).  Errors: open/read errno
 * with the path, then the parse errors, prefixed with the file name. */
int pr_config_load (const char *path, struct pr_config **out, pr_error **err);

/* Parses one "process" object as given to `exec --process FILE` (the
 * runtime-spec process schema).  Same error rules. */
int pr_process_parse (const char *data, size_t len, struct pr_process *out, yajl_val *tree_out, pr_error **err);

void pr_process_free_contents (struct pr_process *p);
/* Frees what one mount entry owns (destination, source, type, options,
 * id maps), not the entry itself; never fails. */
void pr_mount_free_contents (struct pr_mount *m);

void pr_config_free (struct pr_config *cfg);
static inline void pr_config_freep (struct pr_config **c) { if (*c) pr_config_free (*c); }
#define _cleanup_config_ __attribute__ ((cleanup (pr_config_freep)))

/* Returns the annotation value for key, or NULL. */
const char *pr_config_annotation (const struct pr_config *cfg, const char *key);

/* Returns the namespace entry of the given CLONE_NEW* type, or NULL when
 * config.json does not list it. */
const struct pr_namespace *pr_config_namespace (const struct pr_config *cfg, int type);

/* Maps a runtime-spec namespace type name ("pid", "network", "mount",
 * "ipc", "uts", "user", "cgroup", "time") to its CLONE_NEW* flag; -1 when
 * unknown.  pr_namespace_name() is the inverse, and the /proc/PID/ns file
 * name is pr_namespace_proc_name() ("net", "mnt", ...). */
int pr_namespace_type (const char *name);
const char *pr_namespace_name (int type);
const char *pr_namespace_proc_name (int type);

#endif
