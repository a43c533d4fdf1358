#!/bin/bash
# Every line after the first depends on the state the earlier ones left in
# this shell: the options, the working directory, a variable, a function.
set -euo pipefail
cd /srv/project
version=$(cat VERSION)
build() {
	mkdir -p dist
	printf 'built %s\n' "$1" > "dist/app-$1.txt"
}
build "$version"
echo "built dist/app-$version.txt in $PWD"
./preflight.sh
./publish.sh "$version"
