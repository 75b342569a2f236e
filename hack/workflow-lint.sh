#!/usr/bin/env bash
# Lints the CI workflows under .github/workflows: actionlint (with shellcheck over every `run:`
# script; built by `kindlab-twin build binaries actionlint`) and zizmor (security audits, offline: no GitHub API).
# Also checks that the GitLab template is YAML with the job docs/testing.md ("In CI") documents.
#   hack/workflow-lint.sh
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool zizmor
require_venv_tool shellcheck
cd "$ROOT"
actionlint="${ACTIONLINT:-$ROOT/.tools/bin/actionlint}"
[ -x "$actionlint" ] || die "$actionlint is missing: run 'make workflows' (it builds it)"
workflows=(.github/workflows/*.yml examples/ci/rehearse.yml)
[ -e "${workflows[0]}" ] || die "no workflow under .github/workflows"
run "$actionlint" -shellcheck "$VENV/bin/shellcheck" "${workflows[@]}"
run zizmor --offline --no-progress --min-severity low "${workflows[@]}"
run "$VENV/bin/python" -c '
import sys, yaml
doc = yaml.safe_load(open(".gitlab/kind-lab.gitlab-ci.yml", encoding="utf-8"))
job = doc["kind-lab"]
assert any("make lab SCENARIO=" in line for line in job["script"]), "kind-lab: no make lab step"
assert any("make teardown" in line for line in job["after_script"]), "kind-lab: no make teardown in after_script"
import glob, os
listed = sorted(job["parallel"]["matrix"][0]["SCENARIO"])
present = sorted(os.path.basename(f)[:-4] for f in glob.glob("scenarios/*.yml"))
assert listed == present, "kind-lab: its SCENARIO list %s is not scenarios/*.yml %s" % (listed, present)
print("GitLab template: ok")'
echo "workflow lint passed: ${workflows[*]}" >&2
