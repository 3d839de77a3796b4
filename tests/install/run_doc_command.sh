#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a shell block of the README exactly as written, in an empty folder, with the command just
# built first on PATH, and checks its first line of output.
#
#   run_doc_command.sh README.md BLOCK_NAME WORK_DIR COMMAND_DIR EXPECTED_FIRST_LINE_REGEX
set -euo pipefail
document=$1 name=$2 work=$3 command_dir=$4 expected=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
python3 "$here/doc_block.py" "$document" "$name" > "$work/block.sh"
cd "$work"
PATH="$command_dir:$PATH" bash -euo pipefail block.sh > output.txt
cat output.txt
first=$(head -n 1 output.txt)
if ! [[ $first =~ $expected ]]; then
  echo "run_doc_command.sh: first line '$first' does not match '$expected'" >&2
  exit 1
fi
