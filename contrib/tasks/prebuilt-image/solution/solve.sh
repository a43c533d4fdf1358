#!/bin/bash
tr '[:lower:]' '[:upper:]' < /opt/prebuilt/greeting > /srv/out.txt
cat /srv/out.txt
