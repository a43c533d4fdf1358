#!/bin/bash
set -eu
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends hello
hello
