#!/bin/bash
id; pwd; ls -ld .

mkdir -p build && id -un > build/report.txt

sha256sum /etc/task-input | cut -d' ' -f1 >> /work/build/report.txt

cat /work/build/report.txt
