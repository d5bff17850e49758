#!/bin/sh
# The whole suite: in-process tests in parallel, then the daemon-process tests one at a time.
# Arguments (e.g. --tap) go to both ava runs. Fails if either run fails.
set -u
cd "$(dirname "$0")/.."
npx ava "$@"
a=$?
npx ava --config test/ava.process.config.mjs "$@"
b=$?
[ $a -eq 0 ] && [ $b -eq 0 ]
