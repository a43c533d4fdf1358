/* devices.h - device nodes and /dev symlinks inside the container's rootfs.
 * Source: runtime-spec config-linux.md "Devices" and "Default Devices";
 * mknod(2); runc's bind-mount fallback for user namespaces. */
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
 * stderr -> /proc/self/fd/0, 1, 2 (an existing entry is kept), and the
 * directory /dev/shm (mode 1777) when absent.
 * Without in_userns the node is made with mknod(2); a non-device file or
 * symlink already at the path is replaced.  With in_userns (mknod is not
 * permitted there) an empty file is created and the host's node at the same
 * path is bind-mounted onto it.
 * Errors: mknod/mkdir/mount/chown/chmod errno naming the device path;
 * EINVAL for a device path that is not absolute. */
int pr_devices_create (const struct pr_config *cfg, int rootfd, bool in_userns, pr_error **err);

#endif
