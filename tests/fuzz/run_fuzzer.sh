#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer target as a test: first every input under regressions/<target> (inputs that
# once crashed it: each must now pass), then fuzzing for SECONDS from the seed corpus
# corpus/<target> with the dictionary dpselect.dict. New inputs go to WORK_DIR/corpus, crashes to
# WORK_DIR/ (crash-*, timeout-*, oom-*: copy one to regressions/<target> when it is fixed).
#
#   run_fuzzer.sh BINARY SOURCE_DIR WORK_DIR SECONDS
#
# Longer runs, by hand (docs/reliability.md): the same binary with -max_total_time or -runs.
set -eu
binary=$1 source_dir=$2 work_dir=$3 seconds=$4
target=$(basename "$binary")
mkdir -p "$work_dir/corpus"

regressions="$source_dir/regressions/$target"
if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
  echo "== $target: the saved crash inputs again"
  "$binary" -runs=1 "$regressions"/*
fi

echo "== $target: fuzzing for $seconds s"
# -timeout: one input may take 25 s at most (the generalized Gaussian calibration takes seconds
# under ASan on a loaded machine; a hang still fails the test); -rss_limit_mb: 2 GiB (also the
# largest allocation);
# -use_value_profile: guides the search through comparisons with constants (magic bytes, names).
exec "$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -use_value_profile=1 \
  -dict="$source_dir/dpselect.dict" -artifact_prefix="$work_dir/" -print_final_stats=1 \
  "$work_dir/corpus" "$source_dir/corpus/$target"
