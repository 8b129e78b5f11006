#!/usr/bin/env bash
# Runs shellcheck on every shell script under hack/ (part of `make test`), following the files each
# sources; any finding fails. A finding that is meant (an awk program or a remote shell's script in
# single quotes) carries a `# shellcheck disable=SCnnnn # why` on the line before it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
command -v shellcheck >/dev/null || die "shellcheck is missing: run hack/deps.sh"
cd "$root"
mapfile -t scripts < <(find hack -name '*.sh' -not -path 'hack/.work/*' | sort)
shellcheck --external-sources --source-path=SCRIPTDIR "${scripts[@]}"
echo "lint-shell: shellcheck finds nothing in ${#scripts[@]} scripts"
