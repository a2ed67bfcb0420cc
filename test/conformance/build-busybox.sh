#!/usr/bin/env bash
# Builds a static busybox with upstream busybox's default configuration (make defconfig: ash as sh, no
# "prefer applets", no standalone shell), for the conformance runner's busybox image. Debian's
# busybox-static differs where the suite looks: its ash drops environment names that are not shell
# identifiers (`p_data-1`, which the ConfigMap and Secret env specs print with `sh -c env`), which
# upstream's ash keeps; so the image used bash as sh, whose errors differ from ash's (the read-only root
# spec expects `/bin/sh: can't create /file: Read-only file system`). Offline: the source is the public
# mirror of busybox's repository (mirror/busybox, fetched with the search tool's fetch), gcc and glibc's
# static libraries from Debian.
#
#   build-busybox.sh GIT_DIR OUT_FILE [TAG]
set -euo pipefail
GIT_DIR=${1:?usage: build-busybox.sh GIT_DIR OUT_FILE [TAG]}
OUT=${2:?usage: build-busybox.sh GIT_DIR OUT_FILE [TAG]}
TAG=${3:-1_35_0}   # the oldest release that builds with Debian 12's glibc (1.29 uses stime(), removed in glibc 2.31)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git --git-dir="$GIT_DIR" archive "$TAG" | tar -x -C "$work"
cd "$work"
make defconfig >/dev/null
# Static (the image has no libc); tc does not build against newer kernel headers and no spec runs it.
sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/; s/^CONFIG_TC=y/# CONFIG_TC is not set/' .config
nice -n 10 make -j"$(nproc)" busybox >build.log 2>&1 || { tail -30 build.log >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
cp busybox "$OUT.tmp.$$" && mv "$OUT.tmp.$$" "$OUT"
"$OUT" | head -1
