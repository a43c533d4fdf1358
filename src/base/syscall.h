/* syscall.h - every raw system call the runtime makes, as a static inline
 * wrapper, and the kernel ABI constants and structs that older C library
 * or kernel headers lack.  This is the one place that calls syscall(2):
 * the C library has no wrapper for some of these calls, or only in
 * releases newer than the ones proctor builds on, and one set of
 * wrappers keeps each call site the same whichever libc it is.  Each
 * wrapper returns what the system call returns (-1 with errno set on
 * failure: the errors are its man page's, named in its comment).  The
 * flag values and argument structs (linux/mount.h, linux/openat2.h,
 * linux/bpf.h) come from the kernel's uapi headers, which callers include
 * as they need. */
#ifndef PROCTOR_SYSCALL_H
#define PROCTOR_SYSCALL_H

#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

struct mount_attr;
struct open_how;
union bpf_attr;

/* ---- constants the headers may lack (values are kernel ABI) ---------- */

/* Time namespace, Linux 5.6: clone(2), unshare(2), time_namespaces(7). */
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* memfd_create(2) MFD_EXEC, Linux 6.3: an executable memfd where
 * vm.memfd_noexec would make it non-executable. */
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* ioctl_tty(2) TIOCGPTPEER, Linux 4.13: open the peer of a pty master. */
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

/* statfs(2) f_type of cgroup2, Linux 4.5. */
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* pidfd_open(2), Linux 5.3: 434 on every architecture but alpha (the
 * system calls added since 5.1 share one number everywhere). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ioprio_set(2): linux/ioprio.h is not in every kernel-headers version. */
#define PR_IOPRIO_WHO_PROCESS 1
#define PR_IOPRIO_CLASS_SHIFT 13
#define PR_IOPRIO_PRIO_VALUE(cls, data) (((cls) << PR_IOPRIO_CLASS_SHIFT) | (data))

/* glibc before 2.41 has neither struct sched_attr nor sched_setattr(); a
 * private name avoids clashing with the glibc that has them.  Layout:
 * sched_setattr(2), SCHED_ATTR_SIZE_VER1. */
struct pr_sched_attr
{
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

/* ---- processes -------------------------------------------------------- */

/* clone(2) without a new stack, as fork(2) with flags (CLONE_NEW*,
 * CLONE_PARENT) and the exit signal in the low byte (SIGCHLD).  Returns the
 * child's pid in the parent, 0 in the child. */
static inline pid_t
pr_sys_clone (unsigned long flags)
{
  return (pid_t) syscall (SYS_clone, flags, NULL, NULL, NULL, NULL);
}

/* pidfd_open(2): a pidfd for pid (flags 0: close-on-exec is implied). */
static inline int
pr_sys_pidfd_open (pid_t pid, unsigned int flags)
{
  return (int) syscall (SYS_pidfd_open, pid, flags);
}

/* pidfd_send_signal(2) with no siginfo and flags 0: kill(2) aimed at the
 * process the pidfd names, never at a later one that reused its pid. */
static inline int
pr_sys_pidfd_send_signal (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* sched_setattr(2) for pid (0: the caller). */
static inline int
pr_sys_sched_setattr (pid_t pid, struct pr_sched_attr *attr, unsigned int flags)
{
  return (int) syscall (SYS_sched_setattr, pid, attr, flags);
}

/* ioprio_set(2). */
static inline int
pr_sys_ioprio_set (int which, int who, int ioprio)
{
  return (int) syscall (SYS_ioprio_set, which, who, ioprio);
}

/* ---- file descriptors ------------------------------------------------- */

/* close_range(2) over [first, last]; flags 0 or CLOSE_RANGE_CLOEXEC. */
static inline int
pr_sys_close_range (unsigned int first, unsigned int last, unsigned int flags)
{
  return (int) syscall (SYS_close_range, first, last, flags);
}

/* openat2(2) with a struct open_how of `size` bytes (linux/openat2.h). */
static inline int
pr_sys_openat2 (int dirfd, const char *path, struct open_how *how, size_t size)
{
  return (int) syscall (SYS_openat2, dirfd, path, how, size);
}

/* bpf(2) with a whole union bpf_attr (linux/bpf.h). */
static inline long
pr_sys_bpf (int cmd, union bpf_attr *attr, unsigned int size)
{
  return syscall (SYS_bpf, cmd, attr, size);
}

/* ---- mounts: the new mount API (Linux 5.2, mount_setattr 5.12) ------- */

/* open_tree(2): a mount object for path (OPEN_TREE_CLONE: a detached
 * copy; AT_RECURSIVE: with its submounts). */
static inline int
pr_sys_open_tree (int dirfd, const char *path, unsigned int flags)
{
  return (int) syscall (SYS_open_tree, dirfd, path, flags);
}

/* move_mount(2): attaches (or moves) a mount object. */
static inline int
pr_sys_move_mount (int from_dirfd, const char *from_path, int to_dirfd, const char *to_path, unsigned int flags)
{
  return (int) syscall (SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

/* mount_setattr(2): changes mount attributes (read-only, idmap, ...). */
static inline int
pr_sys_mount_setattr (int dirfd, const char *path, unsigned int flags, struct mount_attr *attr, size_t size)
{
  return (int) syscall (SYS_mount_setattr, dirfd, path, flags, attr, size);
}

/* fsopen(2): a filesystem context for fsname ("tmpfs"). */
static inline int
pr_sys_fsopen (const char *fsname, unsigned int flags)
{
  return (int) syscall (SYS_fsopen, fsname, flags);
}

/* fsconfig(2): sets a parameter of, or creates, a filesystem context. */
static inline int
pr_sys_fsconfig (int fsfd, unsigned int cmd, const char *key, const void *value, int aux)
{
  return (int) syscall (SYS_fsconfig, fsfd, cmd, key, value, aux);
}

/* fsmount(2): a mount object for a created filesystem context. */
static inline int
pr_sys_fsmount (int fsfd, unsigned int flags, unsigned int attr_flags)
{
  return (int) syscall (SYS_fsmount, fsfd, flags, attr_flags);
}

/* pivot_root(2).  pivot_root (".", ".") stacks the old root on the new
 * one, to be detached with umount2 (".", MNT_DETACH). */
static inline int
pr_sys_pivot_root (const char *new_root, const char *put_old)
{
  return (int) syscall (SYS_pivot_root, new_root, put_old);
}

#endif
