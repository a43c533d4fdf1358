#!/bin/bash
tar -C / -czf /srv/backup/apt.tar.gz etc/apt

cd /srv/backup && sha256sum apt.tar.gz > apt.tar.gz.sha256

cut -d. -f1 /etc/debian_version > /srv/backup/debian-version

ls -l /srv/backup
