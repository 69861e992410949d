#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with apt): downloads the .deb files the GPU machine lacks into .device-pkgs/
# (ignored by git through .git/info/exclude), to be passed in the device call's `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.device-pkgs/' .git/info/exclude 2>/dev/null || echo '/.device-pkgs/' >> .git/info/exclude
mkdir -p .device-pkgs
cd .device-pkgs
apt-get download nlohmann-json3-dev libcli11-dev zlib1g-dev libdnnl-dev libdnnl2 libgtest-dev libgmock-dev \
  googletest libfmt-dev libfmt9
ls -la
