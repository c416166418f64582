#!/usr/bin/env bash
# check_doc_snippets.sh PYTHON SOURCE_DIR LIBRARY CC CXX
# scripts/doc_snippets.py on a fixture (doc_snippets_fixture.md): the blocks meant to fail fail
# (a C program's exit status, a Python exception, JSON that does not parse, an unmarked block in
# no language), the others pass, the excerpt is skipped; the test exits non-zero. So the
# documentation's test (ctest docs.snippets) could not pass by running nothing.
set -euo pipefail
python=$1
source=$(cd "$2" && pwd)
fixture=$source/scripts/tests/doc_snippets_fixture.md

status=0
out=$("$python" "$source/scripts/doc_snippets.py" --source "$source" --library "$3" --cc "$4" --cxx "$5" \
      "$fixture" 2>&1) || status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "doc_snippets.py exited with $status, expected 1" >&2; exit 1; }
fixture_line() { grep -n -F -x -- "$1" "$fixture" | head -n 1 | cut -d: -f1; }
expected_failures=$(for code in 'int main(void) { return 3; }' 'raise SystemExit("fails")' \
                                '{"identifier": "x",}' 'output sample'; do
    echo "scripts/tests/doc_snippets_fixture.md:$(( $(fixture_line "$code") - 1 ))"
done | sort)
failures=$(sed -nE 's/^FAIL +([^ ]+) .*/\1/p' <<<"$out" | sort)
[ "$failures" = "$expected_failures" ] || {
    echo "failed: $(echo $failures); expected: $(echo $expected_failures)" >&2
    exit 1
}
grep -qxF "9 blocks in 1 files: 1 c, 1 cpp, 1 excerpt, 1 python, 1 sh; 4 failed" <<<"$out" || {
    echo "unexpected summary" >&2
    exit 1
}
echo "doc_snippets.py: the 4 failing blocks fail, the 4 others pass, the excerpt is skipped"
