#!/usr/bin/env bash
# The files of a folder compile as one unit (scripts/unity.sh): the test files in every
# build, the library's sources in the sanitizer builds. There a name one file defines at
# file scope, in an anonymous namespace or not, is visible to the files after it. A clash
# that does not compile is caught by the build; one that does is worse: a later file's call
# can quietly pick an earlier file's overload (two `perturb` helpers did, before they were
# renamed). So no two files of a folder may define the same such name: functions,
# variables, types, aliases and macros, read from the lines that start at column 0 (the
# style every file keeps; nested code is indented). Of a library source only its own
# helpers count: those in an anonymous namespace and those declared `static` at column 0.
# Its other names are declared in headers, where two files defining one would not link; an
# own helper named like another file's public function is not caught. (An alias repeated
# to the same type, such as `using json = nlohmann::json`, is allowed there; one to another
# type does not compile.) nn/norms/ is left out: the sanitizer builds compile it file by
# file (Makefile, LIB_GROUP), so a new norm's helpers may share a name with a built-in's.
# Prints each clash with its files and fails. Run by `make test` before the build.
cd "$(dirname "$0")/.." || exit 1
names_of() {  # the file-scope names read from stdin, one per line
  grep -hoP '^(?!(TEST_CASE|SECTION|TEMPLATE_TEST_CASE|return|namespace|using namespace|template|if|for|while|#include)\b)'\
'(?:#define\s+\K\w+|(?:struct|class|union|enum(?: class)?)\s+\K\w+(?=\s*[{:;])|using\s+\K\w+(?=\s*=)|'\
'[A-Za-z_][\w:<>,*&\s]*?[\s*&]\K\w+(?=\s*(?:\(|=|\{|\[)))' | grep -vxE 'main|operator' | sort -u
}
own_lines() {  # a library source's lines inside its anonymous namespaces and its column-0 statics
  awk '/^namespace \{/ {inside = 1; next} inside && /^\}  \/\/ namespace$/ {inside = 0} inside' "$1" |
    grep -vE '^using \w+ = '
  grep -E '^static ' "$1" | grep -v '^static_assert' | sed 's/^static //'
}
status=0
check() {  # check FOLDER READER: READER FILE prints the lines whose names count
  local dir=$1 reader=$2 clashes
  clashes=$(for f in "$dir"*.cpp; do [ -e "$f" ] && "$reader" "$f" | names_of | sed "s|\$| $f|"; done |
    awk '{files[$1] = files[$1] " " $2; n[$1]++} END {for (k in n) if (n[k] > 1) print k ":" files[k]}' | sort)
  if [ -n "$clashes" ]; then
    echo "$clashes" | sed "s|^|names: defined by more than one file of $dir (they compile as one unit): |"
    status=1
  fi
}
for dir in tests/*/; do check "$dir" cat; done
for dir in tensor/ tensor/cpu/ autograd/ nn/ train/*/ studies/*/; do check "$dir" own_lines; done
exit $status
