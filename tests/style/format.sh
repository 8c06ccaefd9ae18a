#!/bin/sh
# The C sources follow the checked-in .clang-format (fix with: clang-format -i FILE).
# Skipped (77) where clang-format is not installed.
set -u
: "${NGAUGE_SRC:?NGAUGE_SRC must point to the source tree}"
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
cd "$NGAUGE_SRC" || exit 1
files=$( (ls main.c; find analysis bench core modules patterns plots tests timers -name '*.[ch]') | sort)
[ -n "$files" ] || { echo "FAIL: no C sources found under $NGAUGE_SRC"; exit 1; }
bad=0
for f in $files; do
	if ! clang-format --dry-run --Werror "$f" 2>/dev/null; then
		echo "FAIL: $f is not formatted (clang-format -i $f)"
		bad=$((bad + 1))
	fi
done
n=$(echo "$files" | wc -l)
[ "$bad" -eq 0 ] || { echo "$bad of $n files not formatted"; exit 1; }
echo "ok: $n files formatted per .clang-format ($(clang-format --version | head -1))"
