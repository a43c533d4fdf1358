/* namespace.h - joining and creating Linux namespaces and writing user
 * namespace id maps.  Source: runtime-spec config-linux.md "Namespaces",
 * "User namespace mappings"; setns(2), unshare(2), user_namespaces(7). */
#ifndef PROCTOR_NAMESPACE_H
#define PROCTOR_NAMESPACE_H

#include <stdbool.h>
#include <sys/types.h>

#include "../base/error.h"
#include "../config/config.h"

/* The order in which namespaces are joined: the user namespace first, so the
 * process holds capabilities over the namespaces it owns; mount last, since
 * joining it changes root and cwd. */
extern const int pr_ns_join_order[8];

/* Opens the path of every linux.namespaces entry that has one (O_RDONLY |
 * O_CLOEXEC) and checks with ioctl(NS_GET_NSTYPE) that it is a namespace of
 * the declared type.  *fds_out is a malloc'd array parallel to
 * cfg->linux.namespaces, -1 where a new namespace is wanted.  Errors: open
 * errno ("open namespace path `P`"), EINVAL "`P` is not a TYPE namespace". */
int pr_ns_open_paths (const struct pr_config *cfg, int **fds_out, pr_error **err);

/* Closes and frees an array from pr_ns_open_paths (n entries). */
void pr_ns_close_fds (int *fds, size_t n);

/* setns() into every opened namespace in pr_ns_join_order.  When skip_user,
 * the user namespace is left out (it was joined already).  Errors: setns
 * errno naming the namespace type. */
int pr_ns_join (const struct pr_config *cfg, const int *fds, bool only_user, pr_error **err);

/* The CLONE_NEW* flags of the namespaces config.json asks to create (entries
 * without a path). */
int pr_ns_new_flags (const struct pr_config *cfg);

/* Writes /proc/PID/uid_map and gid_map from the given mappings (each in
 * one write(2), the only form the kernel accepts), for a process whose user
 * namespace has no map yet.  Errors: open/write errno naming the file
 * (EPERM when the caller lacks CAP_SETUID/CAP_SETGID over it, EINVAL for a
 * map the kernel refuses: overlapping ranges, more than 340 lines). */
int pr_idmap_write_maps (pid_t pid, const struct pr_idmap *uids, size_t n_uids, const struct pr_idmap *gids,
                         size_t n_gids, pr_error **err);

/* Writes /proc/PID/uid_map and gid_map from linux.uidMappings/gidMappings
 * (the runtime holds CAP_SETUID/CAP_SETGID in the parent namespace, so any
 * map the kernel accepts can be written).  Errors: write errno naming the
 * file; EINVAL when a user namespace is created without mappings. */
int pr_idmap_write (pid_t pid, const struct pr_config *cfg, pr_error **err);

/* Copies the uid_map and gid_map of process `from` to process `to` (whose
 * user namespace has no map yet), so both namespaces map ids alike.
 * Errors: read/write errno naming the file. */
int pr_idmap_copy (pid_t from, pid_t to, pr_error **err);

/* Opens /proc/PID/ns/NAME for an exec into a running container.  Errors:
 * open errno. */
int pr_ns_open_pid (pid_t pid, int type, int *fd_out, pr_error **err);

/* Whether two namespace files name the same namespace (same nsfs inode).
 * Either fd may be an O_PATH or O_RDONLY fd of /proc/PID/ns/X or a bind
 * mount of one.  Errors: fstat errno. */
int pr_ns_same (int a, int b, bool *same, pr_error **err);

/* Whether the namespace at ns_fd is owned by the user namespace at
 * userns_fd (ioctl NS_GET_USERNS, namespaces(7) "Introspecting namespace
 * relationships").  A process that has joined a user namespace holds
 * capabilities only over the namespaces that user namespace (or a
 * descendant) owns: setns(2) into any other fails with EPERM.  Errors:
 * ioctl/fstat errno (EPERM when the owner lies outside the caller's user
 * namespace). */
int pr_ns_owned_by (int ns_fd, int userns_fd, bool *owned, pr_error **err);

/* The nodename and domainname (uname(2)) of the uts namespace at uts_fd,
 * read by a forked child that joins it (the values of another uts
 * namespace are not visible from outside it).  Needs CAP_SYS_ADMIN over
 * its owner.  *hostname and *domainname are malloc'd.  Errors: fork,
 * setns or pipe errno ("read the hostname of uts namespace"). */
int pr_ns_uts_names (int uts_fd, char **hostname, char **domainname, pr_error **err);

/* fork(2) with CLONE_PARENT: the new process is a child of our parent,
 * not of us.  Used after unshare(CLONE_NEWPID)/setns(pid) so the container
 * process (pid 1 of its namespace, or an exec'd process) is the runtime's
 * direct child.  Returns as fork(2). */
pid_t pr_clone_parent (void);

#endif
