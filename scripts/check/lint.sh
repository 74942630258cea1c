#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lint the tree's scripts and documents: shellcheck (with .shellcheckrc,
# sources followed) on every shell script, pyflakes3 on every Python file,
# docutils on every reStructuredText document (rst-check.py). A file is a
# script by its #! line or its extension, so extensionless ones (.ci/run,
# tools/debian/rules) are found too.
#
#   scripts/check/lint.sh shell|python|rst
#
# Prints the files' count and every finding; exit status 1 on a finding.

cd "$(dirname "$0")/../.." || exit 1

kind=${1:-}
case $kind in
shell) want='^#!.*/(ba|busybox |da)?sh' ext=sh ;;
python) want='^#!.*python' ext=py ;;
rst) want='' ext=rst ;;
*) echo "usage: $0 shell|python|rst" >&2; exit 2 ;;
esac

files=()
while IFS= read -r f; do
	[ -f "$f" ] || continue
	# Documents go by their extension only; scripts also by their #!.
	if [[ "$f" == *."$ext" ]] ||
		{ [ -n "$want" ] && head -n 1 "$f" | grep -qE "$want"; }; then
		files+=("$f")
	fi
done < <(git ls-files 2>/dev/null || find . -path ./.git -prune -o -type f -print)

if [ "${#files[@]}" -eq 0 ]; then
	echo "lint: no $kind files found" >&2
	exit 1
fi
echo "lint: $kind: ${#files[@]} files" >&2
case $kind in
shell) shellcheck -x "${files[@]}" ;;
python) pyflakes3 "${files[@]}" ;;
rst) /usr/bin/python3 scripts/check/rst-check.py "${files[@]}" ;;
esac
