#!/usr/bin/env bash
# The test files of a folder compile as one unit (scripts/unity-tests.sh), where a name one
# file defines at file scope, in an anonymous namespace or not, is visible to the files
# after it. A clash that does not compile is caught by the build; one that does is worse:
# a later file's call can quietly pick an earlier file's overload (two `perturb` helpers
# did, before they were renamed). So no two files of a folder may define the same name at
# file scope: functions, variables, types, aliases and macros, read from the lines that
# start at column 0 (the style every test file keeps; nested code is indented). Prints
# each clash with its files and fails. Run by `make test` before the build.
cd "$(dirname "$0")/.." || exit 1
names_of() {  # the file-scope names a test file defines, one per line
  grep -hoP '^(?!(TEST_CASE|SECTION|TEMPLATE_TEST_CASE|return|namespace|using namespace|template|if|for|while|#include)\b)'\
'(?:#define\s+\K\w+|(?:struct|class|union|enum(?: class)?)\s+\K\w+(?=\s*[{:;])|using\s+\K\w+(?=\s*=)|'\
'[A-Za-z_][\w:<>,*&\s]*?[\s*&]\K\w+(?=\s*(?:\(|=|\{|\[)))' "$1" | grep -vxE 'main|operator' | sort -u
}
status=0
for dir in tests/*/; do
  clashes=$(for f in "$dir"*.cpp; do [ -e "$f" ] && names_of "$f" | sed "s|\$| $f|"; done |
    awk '{files[$1] = files[$1] " " $2; n[$1]++} END {for (k in n) if (n[k] > 1) print k ":" files[k]}' | sort)
  if [ -n "$clashes" ]; then
    echo "$clashes" | sed "s|^|test names: defined by more than one file of $dir (they compile as one unit): |"
    status=1
  fi
done
exit $status
