#!/usr/bin/env bash
# Runs shellcheck on every shell script git tracks (part of `make test`): a file whose first line
# is a sh or bash shebang, or any *.sh, following the files each sources; any finding fails. A
# finding that is meant (an awk program or a remote shell's script in single quotes) carries a
# `# shellcheck disable=SCnnnn # why` on the line before it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(soko_root)
command -v shellcheck >/dev/null || die "shellcheck is missing: run hack/deps.sh"
cd "$root"
mapfile -t scripts < <(
  git ls-files | while IFS= read -r file; do
    if [[ $file == *.sh ]] || head -1 "$file" | grep -Eq '^#!(/usr/bin/env |/bin/)(ba)?sh$'; then
      echo "$file"
    fi
  done
)
((${#scripts[@]} > 0)) || die "git lists no shell script under $root"
shellcheck --external-sources --source-path=SCRIPTDIR "${scripts[@]}"
echo "lint-shell: shellcheck finds nothing in ${#scripts[@]} scripts"
