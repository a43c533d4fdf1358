/* devices.h - device nodes and /dev symlinks inside the container's rootfs.
 * Source: runtime-spec config-linux.md "Devices" and "Default Devices";
 * mknod(2); fsopen(2), fsmount(2), open_tree(2), move_mount(2) for the
 * nodes of a container with a user namespace. */
#ifndef PROCTOR_DEVICES_H
#define PROCTOR_DEVICES_H

#include <stdbool.h>

#include "../base/error.h"
#include "../config/config.h"

/* Creates, inside the rootfs open as rootfd (an O_PATH directory fd; every
 * path is resolved with RESOLVE_IN_ROOT), the runtime-spec default devices
 * /dev/null, zero, full, random, urandom and tty (character devices, mode
 * 0666, owner 0:0), then every cfg->linux.devices entry (mode fileMode,
 * default 0666; owner uid:gid, default 0:0).  A configured device with the
 * same path as a default replaces it.  Also creates the symlinks
 * /dev/ptmx -> pts/ptmx, /dev/fd -> /proc/self/fd, /dev/stdin, stdout,
 * stderr -> /proc/self/fd/0, 1, 2 (an existing entry is kept), the
 * directory /dev/shm (mode 1777) when absent, and with process.terminal
 * an empty regular file /dev/console (the pty's mount target; any other
 * kind of entry there is replaced, never followed).
 * Without in_userns the node is made with mknod(2); a non-device file or
 * symlink already at the path is replaced.  With in_userns (mknod is not
 * permitted there) an empty file is created and the node's detached mount
 * from pr_devices_open (dev_fds, indexed as that function says) is
 * attached onto it, then replaced by a copy made at that moment, so that
 * mountinfo lists it after the config's mounts, where crun's binds are;
 * without one (dev_fds NULL or -1: a mount namespace
 * joined by path) the host's node at the same path is bind-mounted.
 * Errors: mknod/mkdir/mount/move_mount/chown/chmod errno naming the device
 * path; EINVAL for a device path that is not absolute. */
int pr_devices_create (const struct pr_config *cfg, int rootfd, bool in_userns, const int *dev_fds,
                       pr_error **err);

/* The number of entries pr_devices_open fills: the default devices, then
 * cfg->linux.devices in order. */
size_t pr_devices_count (const struct pr_config *cfg);

/* In stage 1 of create, as the host's root before the container's user
 * namespace exists: makes every device node the container will get
 * (default devices not overridden by linux.devices, then linux.devices;
 * FIFOs excepted) with mknod(2) in a private tmpfs that is never attached
 * anywhere (fsopen/fsmount), with the configured mode and the owner mapped
 * to host ids through linux.uidMappings/gidMappings, and returns a
 * detached mount of each (open_tree OPEN_TREE_CLONE) in *fds_out
 * (pr_devices_count entries, O_CLOEXEC, -1 where there is none; the caller
 * closes them).  So a device the host lacks, or has under another number
 * at that path, is still the configured one (issue #19 item 5; crun
 * creates them too), and nothing is made on the host's /dev.  A node the
 * device cgroup refuses to mknod (EPERM) gets -1: the init binds the
 * host's node then, as without this step.
 * What a plain container under crun shows is kept (SPEC section 2
 * "Filesystem": a rollout reads like one): a default device whose host
 * node is that device, with that mode and an owner no container id maps
 * to, gets -1 too and is the host's node, as crun binds it; the tmpfs
 * takes the source and options of the host's /dev filesystem, and each
 * node its path below /dev ("null": mountinfo root "/null") and the host
 * node's times (devices-internal.h).  Errors:
 * fsopen/fsconfig/fsmount errno; mknod/chown/chmod/open_tree errno naming
 * the device path; EINVAL for a bad device entry. */
int pr_devices_open (const struct pr_config *cfg, int **fds_out, pr_error **err);

#endif
