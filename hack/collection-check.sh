#!/usr/bin/env bash
# The collection as Galaxy users get it, checked offline:
#   1. antsibull-changelog lint (changelogs/config.yaml and the fragments);
#   2. ansible-galaxy collection build, then install of the artifact into an empty path;
#   3. ansible-doc of every module and every role, read from that installed copy only;
#   4. antsibull-docs lint-collection-docs over the installed copy;
#   5. the docs site: antsibull-docs renders the installed collection to reStructuredText and
#      sphinx-build (-W, nitpicky) makes static HTML of it. Built and checked, not published.
# Everything goes to build/collection (gitignored, and in galaxy.yml's build_ignore).
#   hack/collection-check.sh
set -euo pipefail
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for tool in ansible-galaxy ansible-doc antsibull-changelog antsibull-docs sphinx-build; do require_venv_tool "$tool"; done
cd "$ROOT"
OUT="$ROOT/build/collection"
rm -rf "$OUT"
mkdir -p "$OUT/dist" "$OUT/install"
start=$SECONDS

step() { printf '\n== %s\n' "$*" >&2; }

step "changelog fragments"
run antsibull-changelog lint

step "build and install the collection artifact"
run ansible-galaxy collection build --output-path "$OUT/dist" "$ROOT"
artifacts=("$OUT"/dist/kindlab-ingress-*.tar.gz)
if [ "${#artifacts[@]}" -ne 1 ] || [ ! -f "${artifacts[0]}" ]; then
    die "expected one artifact in $OUT/dist, got: ${artifacts[*]}"
fi
# From here on only the installed copy is visible: not the repository's .collections link
# (ansible.cfg is not read from $OUT), not ~/.ansible/collections.
export ANSIBLE_COLLECTIONS_PATH="$OUT/install"
cd "$OUT"
run ansible-galaxy collection install --offline -p "$OUT/install" "${artifacts[0]}"
installed="$OUT/install/ansible_collections/kindlab/ingress"
[ -f "$installed/MANIFEST.json" ] || die "the artifact did not install to $installed"

step "ansible-doc of every module and role, from the installed artifact"
modules=()
for f in "$ROOT"/plugins/modules/*.py; do
    name="$(basename "$f" .py)"
    [ "$name" = __init__ ] || modules+=("kindlab.ingress.$name")
done
roles=()
for f in "$ROOT"/roles/*/meta/argument_specs.yml; do
    [ -e "$f" ] && roles+=("kindlab.ingress.$(basename "$(dirname "$(dirname "$f")")")")
done
[ "${#modules[@]}" -gt 0 ] || die "no module found under plugins/modules"
run ansible-doc --json -t module "${modules[@]}" >"$OUT/modules.json"
run ansible-doc --json -t role "${roles[@]}" >"$OUT/roles.json"
"$VENV/bin/python" - "$OUT" "$installed" "${modules[@]}" <<'EOF'
import json, sys
out, installed, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
docs = json.load(open(out + "/modules.json", encoding="utf-8"))
problems = [m + ": not documented" for m in wanted if m not in docs]
for name, entry in docs.items():
    doc = entry.get("doc") or {}
    if not str(doc.get("filename", "")).startswith(installed + "/"):
        problems.append("%s: documented from %s, not from the installed artifact" % (name, doc.get("filename")))
    for key in ("short_description", "description"):
        if not doc.get(key):
            problems.append("%s: no %s" % (name, key))
    if not entry.get("examples") or entry.get("return") is None:
        problems.append("%s: no EXAMPLES or no RETURN" % name)
roles = json.load(open(out + "/roles.json", encoding="utf-8"))
problems += ["%s: no entry point main" % r for r, d in roles.items() if "main" not in (d.get("entry_points") or {})]
if problems:
    sys.exit("ansible-doc problems:\n  " + "\n  ".join(problems))
print("ansible-doc: %d modules and %d roles documented from %s" % (len(docs), len(roles), installed))
EOF

step "antsibull-docs lint of the installed collection's docs"
(cd "$installed" && run antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck .)

step "docs site (antsibull-docs + sphinx-build, offline)"
mkdir -p "$OUT/docs/rst"
chmod og-w "$OUT/docs/rst"  # antsibull-docs wants its destination writable only by its owner
cp "$ROOT/docs/site/index.rst" "$OUT/docs/rst/index.rst"
run antsibull-docs --config-file "$ROOT/docs/site/antsibull-docs.cfg" collection --fail-on-error --use-current \
    --dest-dir "$OUT/docs/rst" kindlab.ingress
run sphinx-build -q -W --keep-going -b html -c "$ROOT/docs/site" "$OUT/docs/rst" "$OUT/docs/html"
missing=()
for m in "${modules[@]}"; do
    page="$OUT/docs/html/collections/kindlab/ingress/${m#kindlab.ingress.}_module.html"
    [ -s "$page" ] || missing+=("$page")
done
[ "${#missing[@]}" -eq 0 ] || die "docs site pages missing: ${missing[*]}"
printf '\ncollection check passed in %d s: %s; docs site at %s\n' "$((SECONDS - start))" \
    "$(basename "${artifacts[0]}")" "$OUT/docs/html/index.html" >&2
