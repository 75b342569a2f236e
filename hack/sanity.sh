#!/usr/bin/env bash
# Runs `ansible-test sanity` on the collection, offline, with the project venv.
#   hack/sanity.sh [extra ansible-test sanity args, e.g. --test pep8 -v]
#
# ansible-test must run from a directory named ansible_collections/kindlab/ingress and
# looks at the files git reports there, so the tracked and untracked-not-ignored files
# are copied afresh into build/ansible_collections/kindlab/ingress (a git work tree of
# its own, so ansible-test sees exactly those files) and it runs there. Its results land
# in build/ansible_collections/kindlab/ingress/tests/output.
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool ansible-test
unset ANSIBLE_COLLECTIONS_PATH   # ansible-test sets up its own collection root

PYTHON_VERSION="${SANITY_PYTHON:-3.11}"

# 1. The get-pip stand-in: ansible-test --venv bootstraps pip in each venv it creates
#    with a get-pip script it downloads unless ~/.ansible/test/cache/get_pip_<ver>.py
#    exists. Ask ansible-test which pip version it wants, and put the stand-in there
#    (a real cached get-pip script, if one is there, is left alone).
pip_version="$("$VENV/bin/python" - <<'PY'
import types
from ansible_test._internal.python_requirements import get_venv_packages
print(get_venv_packages(types.SimpleNamespace(version='3.11'))['pip'])
PY
)"
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
standin="$ROOT/hack/get_pip_standin.py"
if [ ! -e "$cache" ] || { head -n1 "$cache" | grep -q 'kindlab.ingress get-pip stand-in' && ! cmp -s "$standin" "$cache"; }; then
    mkdir -p "$(dirname "$cache")"
    run cp "$standin" "$cache"
fi

# 2. A fresh copy of the collection's files.
#    ansible-test's own tests/output (its delegation venv, results) is kept between runs.
dest="$ROOT/build/ansible_collections/kindlab/ingress"
keep="$ROOT/build/.sanity-tests-output"
rm -rf "$keep"
if [ -d "$dest/tests/output" ]; then mv "$dest/tests/output" "$keep"; fi
rm -rf "$dest"
mkdir -p "$dest"
cd "$ROOT"
# Local state is never collection content, even where .gitignore misses it.
excluded='^(\.venv|\.collections|\.tools|\.git|build|artifacts|tests/output)/'
git ls-files -co --exclude-standard -z \
    | while IFS= read -r -d '' f; do
        [[ "$f" =~ $excluded ]] && continue
        # tracked files deleted in the work tree are skipped, as ansible-test does
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
      done \
    | tar --null -T - -cf - | tar -xf - -C "$dest"
echo "copied $(cd "$dest" && find . -type f | wc -l) files to $dest" >&2
mkdir -p "$dest/tests"
if [ -d "$keep" ]; then mv "$keep" "$dest/tests/output"; fi
git -C "$dest" init -q   # ansible-test lists files with git ls-files

# 3. Run it.
cd "$dest"
run ansible-test sanity --venv --python "$PYTHON_VERSION" --color no "$@"
