#!/usr/bin/env bash
# `ansible-playbook --syntax-check` of every playbook (playbooks/*.yml and the playbooks of
# the molecule scenarios under extensions/molecule/), with the dev inventory; then of
# playbooks/lab.yml with each scenario file (-e @scenarios/NAME.yml) so that a scenario
# that does not load as YAML is caught too. Runs them all, then fails if any failed.
#   hack/syntax-check.sh [extra ansible-playbook args]
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool ansible-playbook
ensure_collection_link
cd "$ROOT"
INVENTORY="${INVENTORY:-inventories/local/hosts.yml}"

# Playbooks are YAML lists of plays (hosts:/import_playbook:); molecule.yml and vars
# files are not.
mapfile -t playbooks < <(python - <<'PY'
import glob
import yaml

candidates = sorted(glob.glob('playbooks/*.y*ml')) + sorted(glob.glob('extensions/molecule/*/*.y*ml'))
for path in candidates:
    try:
        with open(path, encoding='utf-8') as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError:
        print(path)  # let ansible-playbook report the error
        continue
    if isinstance(data, list) and data and all(
        isinstance(play, dict)
        and any(key in play for key in ('hosts', 'import_playbook', 'ansible.builtin.import_playbook'))
        for play in data
    ):
        print(path)
PY
)
[ "${#playbooks[@]}" -gt 0 ] || die "no playbooks found"

failed=()
check() {
    if ! run ansible-playbook --syntax-check -i "$INVENTORY" "$@"; then
        failed+=("$*")
    fi
}
for playbook in "${playbooks[@]}"; do
    check "$playbook" "${@}"
done
if [ -f playbooks/lab.yml ]; then
    for scenario in scenarios/*.yml; do
        [ -e "$scenario" ] || continue
        check playbooks/lab.yml -e "@$scenario" "${@}"
    done
fi

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'syntax check FAILED for:\n' >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "syntax check passed: ${#playbooks[@]} playbook(s), $(find scenarios -maxdepth 1 -name '*.yml' 2>/dev/null | wc -l) scenario(s)" >&2
