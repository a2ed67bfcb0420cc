#!/usr/bin/env bash
# Builds upstream's v1.23.16 kubectl for the conformance runner with its version variables set, as
# upstream's release build sets them (hack/lib/version.sh: gitVersion, gitMajor, gitMinor, gitCommit,
# gitTreeState, buildDate, in both the client-go and the component-base copies). Without them
# `kubectl version` prints GitCommit:"$Format:%H$", which the suite's "Kubectl version should check is
# all data is printed" rejects. Offline: Debian's Go 1.19 and the unpacked upstream tree that
# ../shared/tools/upstream/build.sh made (vendor/ and generated files present).
#
#   build-kubectl.sh SRC_DIR OUT_FILE [GIT_DIR]
#
# GIT_DIR (default: the fetched mirror of jiayu997/kubernetes-src) names the commit built; without it
# the commit is unknown and the script refuses rather than invent one.
set -euo pipefail
SRC=${1:?usage: build-kubectl.sh SRC_DIR OUT_FILE [GIT_DIR]}
OUT=${2:?usage: build-kubectl.sh SRC_DIR OUT_FILE [GIT_DIR]}
GIT_DIR=${3:-/work/.mirror/jiayu997+kubernetes-src/repo}
REV=f494d12c   # the v1.23.16 tree build.sh unpacks
[ -x /usr/lib/go-1.19/bin/go ] || { echo "build-kubectl: Debian's golang-1.19-go is missing" >&2; exit 1; }
[ -f "$SRC/cmd/kubectl/kubectl.go" ] || { echo "build-kubectl: no upstream tree at $SRC" >&2; exit 1; }
commit=$(git --git-dir="$GIT_DIR" rev-parse --verify "$REV^{commit}" 2>/dev/null) \
  || { echo "build-kubectl: cannot resolve $REV in $GIT_DIR" >&2; exit 1; }
# The commit's date, not the build's: the same source gives the same binary.
epoch=$(git --git-dir="$GIT_DIR" log -1 --format=%ct "$commit")
built=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
# "dirty": build.sh adds four vendor files the snapshot lacks (from Debian's packages). gitVersion stays
# v1.23.16 (upstream would append -dirty) so it matches the other binaries build.sh makes.
LD="-s -w"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  LD="$LD -X $p.gitVersion=v1.23.16 -X $p.gitMajor=1 -X $p.gitMinor=23 -X $p.gitCommit=$commit"
  LD="$LD -X $p.gitTreeState=dirty -X $p.buildDate=$built"
done
export PATH=/usr/lib/go-1.19/bin:$PATH GOFLAGS=-mod=vendor CGO_ENABLED=0 GOPROXY=off GOTOOLCHAIN=local
mkdir -p "$(dirname "$OUT")"
tmp="$OUT.tmp.$$"
(cd "$SRC" && nice -n 10 go build -tags providerless -ldflags "$LD" -o "$tmp" ./cmd/kubectl)
mv "$tmp" "$OUT"
"$OUT" version --client
