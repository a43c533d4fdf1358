#!/bin/bash
env | grep -i '^http_proxy='

apt-get update -q

DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends sqlite3

sqlite3 /srv/app.db "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('installed through the allowlist');"
