#!/usr/bin/env bash
# Makes sure a headless Chromium is on the machine for the report.html browser test
# (tests/unit/plugins/module_utils/verify/test_report_html_browser.py): Debian's `chromium`
# package, driven by Playwright through executable_path (no browser download).
# Idempotent: does nothing when a chromium binary is already on PATH. As root (CI, these
# machines) it installs the package with apt-get and fails if that fails; otherwise it says
# loudly that the browser test will be skipped.
#   hack/get-chromium.sh
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "get-chromium.sh: WARNING: no chromium here and no way to install it (not root, or no apt-get):" \
        "the report.html browser test will be SKIPPED. Install your distribution's chromium to run it." >&2
    exit 0
fi
echo "+ apt-get update && apt-get install -y --no-install-recommends chromium" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "get-chromium.sh: error: chromium is still missing after apt-get install" >&2; exit 1; }
