#!/usr/bin/env bash
# Runs upstream's conformance suite against orch and writes docs/conformance.md (issue 17).
# Needs e2e.test and the unpacked upstream tree from ../shared/tools/upstream/build.sh
# (default /tmp/upstream-k8s/{bin,src}; E2E_TEST and UPSTREAM_SRC override), root (pods run),
# and Debian's busybox-static, gcc, nginx-light and apache2-bin (installed when missing).
# Options: test/conformance/run.ts (--list, --focus, --focus-file, --skip-file, --shards, --runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build --silent
exec node dist/test/conformance/run.js "$@"
