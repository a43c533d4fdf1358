#!/bin/sh
# Rootfs recipe: proctor-rollout runs `rootfs.sh DIR` on the host and imports
# DIR as the image (with the --change lines of import-changes).  A static
# busybox from the host (Debian's busybox-static) and one user, tester.
set -eu
root=$1
bb=/bin/busybox
[ -x "$bb" ] || bb=$(command -v busybox)
mkdir -p "$root"/bin "$root"/sbin "$root"/usr/bin "$root"/usr/sbin "$root"/etc "$root"/proc \
	"$root"/sys "$root"/dev "$root"/tmp "$root"/root "$root"/home/tester "$root"/var "$root"/run
cp "$bb" "$root/bin/busybox"
chroot "$root" /bin/busybox --install -s
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\ntester:x:1000:1000:tester:/home/tester:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\ntester:x:1000:\n' > "$root/etc/group"
chown 1000:1000 "$root/home/tester"
chmod 0755 "$root/home/tester"
