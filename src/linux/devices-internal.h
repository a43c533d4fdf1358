/* devices-internal.h - what devices.c and devices_hostfs.c share: the
 * private tmpfs of a user-namespaced container's device nodes.  Not part
 * of the public API (see devices.h). */
#ifndef PROCTOR_DEVICES_INTERNAL_H
#define PROCTOR_DEVICES_INTERNAL_H

#include "devices.h"
#include "../base/error.h"

/* The filesystem holding the host's /dev/null, as /proc/self/mountinfo
 * shows it (proc(5)). */
struct pr_host_dev_fs
{
  char fstype[64];     /* "devtmpfs" */
  char source[256];    /* "devtmpfs", "udev" */
  char superopts[512]; /* "rw,size=12334076k,nr_inodes=3083519,mode=755" */
};

/* Makes a new tmpfs as a detached mount (fsopen(2), fsmount(2), nosuid
 * and noexec) with the source and the super options of the filesystem
 * holding the host's /dev/null when that is a devtmpfs or tmpfs (its
 * source only when it is not, or the kernel refuses one of its options;
 * a plain tmpfs when there is none),
 * so that binds of its nodes read in mountinfo as crun's binds of the
 * host's nodes do, but for the type.  Reachable only through *mnt_out
 * (O_CLOEXEC): no process of the container or the host can swap what is
 * made in it; mounted by the host's root, its nodes work wherever they
 * are attached (no SB_I_NODEV).  Errors: fsopen/fsconfig/fsmount errno.
 * (devices_hostfs.c) */
int pr_devices_private_tmpfs (int *mnt_out, pr_error **err);

#endif
