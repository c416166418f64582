#!/usr/bin/env bash
# check_exports.sh HEADER LIBRARY [CC]
# The library's dynamic symbol table defines exactly the functions the header declares.
set -euo pipefail
header=$1
library=$2
cc=${3:-cc}

# The declarations: the header without its comments (the preprocessor strips them), every
# `stepkit_name(`. A typedef'd function pointer `(*stepkit_clock_fn)(` does not match.
declared=$("$cc" -E -P -x c "$header" | grep -oE '\bstepkit_[A-Za-z0-9_]+[[:space:]]*\(' \
           | sed -E 's/[[:space:]]*\($//' | sort -u)
# The definitions: every defined dynamic symbol (any version suffix removed).
exported=$(nm -D --defined-only "$library" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u)

if [ -z "$declared" ]; then
    echo "no stepkit_* declarations found in $header" >&2
    exit 1
fi
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
status=0
if [ -n "$missing" ]; then
    echo "declared in $(basename "$header") but not exported by $(basename "$library"):" >&2
    printf '  %s\n' $missing >&2
    status=1
fi
if [ -n "$extra" ]; then
    echo "exported by $(basename "$library") but not declared in $(basename "$header"):" >&2
    printf '  %s\n' $extra >&2
    status=1
fi
if [ "$status" -eq 0 ]; then
    echo "$(printf '%s\n' "$declared" | wc -l) functions declared, the same exported:"
    printf '  %s\n' $declared
fi
exit "$status"
