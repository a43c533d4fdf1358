#!/bin/bash
git init -q -b main /work/project && printf 'served by the agent\n' > /work/project/README

git -C /work/project add README && git -C /work/project commit -q -m 'initial import'

git clone -q --bare /work/project /srv/git/project.git && git -C /srv/git/project.git update-server-info

busybox httpd -p 127.0.0.1:8000 -h /srv/git

git ls-remote http://127.0.0.1:8000/project.git
