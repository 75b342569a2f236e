#!/usr/bin/env bash
# mypy (strict, configured in pyproject.toml [tool.mypy]) over the collection's
# module_utils and the twin package. The module_utils are checked by their import name,
# ansible_collections.kindlab.ingress.plugins.module_utils, found through the development
# link in .collections, so their imports of each other resolve; paths in the report are
# shown relative to the repository root.
#   hack/mypy.sh [extra mypy args]
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_venv_tool mypy
ensure_collection_link
cd "$ROOT"
export MYPYPATH="$ROOT/.collections:$ROOT/src"
packages=()
compgen -G 'plugins/module_utils/*.py' >/dev/null && packages+=(-p ansible_collections.kindlab.ingress.plugins.module_utils)
[ -d src/kindlab_twin ] && packages+=(-p kindlab_twin)
[ "${#packages[@]}" -gt 0 ] || die "nothing to check"
printf '+ MYPYPATH=%s mypy --config-file pyproject.toml %s\n' "$MYPYPATH" "${packages[*]} $*" >&2
mypy --config-file pyproject.toml "${packages[@]}" "$@" \
    | sed -u 's|^\.collections/ansible_collections/kindlab/ingress/||'
