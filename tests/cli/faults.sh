#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fault cases of the dpselect command that run_cli.cmake cannot set up: a pipe closed by its
# reader, named pipes, a file that ends before its announced size, a memory limit, a file-size
# limit on --output, an empty argument (CMake's lists drop empty elements). POSIX sh and
# coreutils only. Run by faults.cmake from tests/cli/data:
#   sh faults.sh <case> <dpselect binary> <scratch folder, emptied here>
# Exit status: 0 passed, 1 failed (with the reason on stderr), 77 skipped (said why).
set -u

fault_case=$1
cli=$2
scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
trap 'rm -rf "$scratch"' EXIT
out=$scratch/stdout
err=$scratch/stderr

fail() {
  echo "FAILED ($fault_case): $1" >&2
  echo "--- stdout (first lines):" >&2
  head -n 5 "$out" >&2 2>/dev/null
  echo "--- stderr:" >&2
  cat "$err" >&2 2>/dev/null
  exit 1
}

# A refused or failed run: status $1, nothing on stdout, and stderr exactly one line, the error,
# matching the extended regex $2.
expect_error() {
  [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"
  [ ! -s "$out" ] || fail "something was printed on stdout"
  [ "$(wc -l < "$err")" -eq 1 ] || fail "stderr is not exactly one line"
  grep -Eq "^dpselect: error: $2\$" "$err" || fail "stderr does not match: $2"
}

# More output (about 4 MB of text) than any pipe buffers (at most 1 MiB on Linux by default).
long_output="select --utilities utilities.txt --epsilon 0.00001 --sensitivity 1 --repeat 20000"

# Runs the long output into a reader that takes one line and leaves; sets $status to dpselect's.
run_into_closed_pipe() {
  { "$cli" $long_output 2>"$err"; echo $? >"$scratch/status"; } | head -n 1 >"$out"
  status=$(cat "$scratch/status")
}

case $fault_case in
  closed_pipe)
    # A mature filter dies of SIGPIPE when its reader leaves (status 128 + 13 in the shell). If
    # the test runner left SIGPIPE ignored, which a shell cannot undo, the write fails with EPIPE
    # instead and must end in an error: either way, never status 0.
    run_into_closed_pipe
    [ "$status" -ne 0 ] || fail "status 0 although the reader took one line of about 4 MB"
    if [ "$status" -gt 128 ]; then
      [ "$(kill -l $((status - 128)))" = PIPE ] || fail "killed by signal $((status - 128)), not SIGPIPE"
    else
      : >"$out"  # the line head took
      expect_error 1 ".*Broken pipe"
    fi
    ;;
  closed_pipe_sigpipe_ignored)
    # A process started with SIGPIPE ignored (as some runners and daemons start their children)
    # sees EPIPE: one error line and status 1.
    trap '' PIPE
    run_into_closed_pipe
    : >"$out"
    expect_error 1 "the release was made but its report could not be written to standard output: Broken pipe"
    ;;
  npy_pipe_ends_early)
    # A pipe on standard input that ends 106 bytes into the 128 of data its .npy header announces.
    mkfifo "$scratch/pipe" || exit 1
    head -c 150 utilities.npy >"$scratch/pipe" &
    "$cli" select --utilities - --epsilon 1 --sensitivity 1 <"$scratch/pipe" >"$out" 2>"$err"
    status=$?
    wait
    expect_error 2 "--utilities <stdin>: \\.npy data does not match its shape \\(truncated or extra bytes\\)"
    ;;
  named_pipe_without_writer)
    # A named pipe given by name is refused at once; opening it plainly would wait for a writer
    # forever (the test's timeout then fails it).
    mkfifo "$scratch/pipe" || exit 1
    "$cli" select --utilities "$scratch/pipe" --epsilon 1 --sensitivity 1 >"$out" 2>"$err"
    status=$?
    expect_error 2 "--utilities [^ ]*/pipe: not a regular file \\(a pipe: give it on standard input, as - < PIPE\\)"
    ;;
  file_shorter_than_its_size)
    # A file that shrinks between the size check and the read, made deterministic: sysfs
    # attribute files report a size of one page but hold a few bytes, so the read ends before
    # the size fstat gave, exactly as after a truncation. The byte counts stay out of the message
    # (for bids they are the number of bidders).
    shrunk=
    for candidate in /sys/kernel/mm/transparent_hugepage/enabled /sys/devices/system/cpu/online \
        /sys/devices/system/cpu/possible /sys/kernel/profiling; do
      if [ -f "$candidate" ] && [ -r "$candidate" ] &&
          [ "$(wc -c <"$candidate")" -lt "$(stat -L -c %s "$candidate")" ]; then
        shrunk=$candidate
        break
      fi
    done
    if [ -z "$shrunk" ]; then
      echo "skipped: no sysfs file here reports more bytes than it holds" >&2
      exit 77
    fi
    "$cli" select --utilities "$shrunk" --format f64 --epsilon 1 --sensitivity 1 >"$out" 2>"$err"
    status=$?
    expect_error 2 "--utilities $shrunk: the file ended before its size when opened \\(it shrank while being read\\)"
    "$cli" price --bids "$shrunk" --format f64 --grid 1:4:1 --epsilon 1 >"$out" 2>"$err"
    status=$?
    expect_error 2 "--bids $shrunk: the file ended before its size when opened \\(it shrank while being read\\)"
    ;;
  memory_limit)
    # Inputs of 1 GiB (sparse files: no disk used) under a 512 MiB address-space limit. A small
    # input must run under the same limit first: where the process cannot even start there (a
    # runtime that reserves address space up front), the case is skipped, not failed.
    limit_kib=524288
    OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=1
    export OMP_NUM_THREADS MALLOC_ARENA_MAX
    if ! (ulimit -v $limit_kib && "$cli" select --utilities utilities.txt --epsilon 1 \
        --sensitivity 1 >"$out" 2>"$err"); then
      echo "skipped: dpselect does not run on a small input under ulimit -v $limit_kib:" >&2
      cat "$err" >&2
      exit 77
    fi
    gib=1073741824
    truncate -s $gib "$scratch/big.f64" && truncate -s $gib "$scratch/big.txt" || exit 1
    # A float64 .npy of 2^27 zeros: a 128-byte header (magic, version 1.0, header length 118).
    {
      printf '\223NUMPY\001\000v\000'
      printf "%-117s\n" "{'descr': '<f8', 'fortran_order': False, 'shape': (134217728,), }"
    } >"$scratch/big.npy" && truncate -s $((128 + gib)) "$scratch/big.npy" || exit 1
    # Text is read whole: refused. Raw and .npy utilities are read a chunk at a time: selected
    # within the limit, as are their top 10. Sorted bids and quantile positions hold 8 bytes a
    # value: refused, naming the file.
    (ulimit -v $limit_kib && exec "$cli" select --utilities "$scratch/big.txt" --epsilon 1 \
      --sensitivity 1 >"$out" 2>"$err")
    status=$?
    expect_error 1 "--utilities [^ ]*/big.txt: not enough memory to read it \\(free memory, raise the limit set by ulimit -v, or give a smaller input\\)"
    for input in big.f64 big.npy; do
      (ulimit -v $limit_kib && exec "$cli" select --utilities "$scratch/$input" --epsilon 1 \
        --sensitivity 1 --quiet >"$out" 2>"$err")
      status=$?
      [ "$status" -eq 0 ] && grep -Eq '^[0-9]+$' "$out" || fail "select over $input: status $status under the limit"
      (ulimit -v $limit_kib && exec "$cli" topk --utilities "$scratch/$input" --k 10 --epsilon 1 \
        --sensitivity 1 --backend cpu --quiet >"$out" 2>"$err")
      status=$?
      [ "$status" -eq 0 ] && [ "$(wc -l <"$out")" -eq 10 ] || fail "topk over $input: status $status under the limit"
    done
    for input in big.f64 big.txt big.npy; do
      (ulimit -v $limit_kib && exec "$cli" price --bids "$scratch/$input" --grid 1:4:1 \
        --epsilon 1 >"$out" 2>"$err")
      status=$?
      expect_error 1 "--bids [^ ]*/$input: not enough memory to read it .*"
      (ulimit -v $limit_kib && exec "$cli" quantile --data "$scratch/$input" --q 0.5 --range 0:1 \
        --epsilon 1 >"$out" 2>"$err")
      status=$?
      expect_error 1 "--data [^ ]*/$input: not enough memory to read it .*"
    done
    (ulimit -v $limit_kib && exec "$cli" select --utilities - --format f64 --epsilon 1 \
      --sensitivity 1 <"$scratch/big.f64" >"$out" 2>"$err")
    status=$?
    expect_error 1 "--utilities <stdin>: not enough memory to read it .*"
    ;;
  output_file_size_limit)
    # Keys and indices of about 36 KB for --output under a file-size limit of 16 blocks (8 or 16
    # KiB, by the shell's unit): the write
    # fails after the release with EFBIG (not a kill by SIGXFSZ), the run ends in status 1 with
    # the error as its last line (after the warnings of --repeat), and neither the file nor its
    # temporary file is left behind.
    mkdir "$scratch/target" || exit 1
    expect_lost_output() {
      [ "$status" -eq 1 ] || fail "exit status $status, expected 1"
      [ ! -s "$out" ] || fail "something was printed on stdout"
      tail -n 1 "$err" | grep -Eq "^dpselect: error: --output [^ ]*/target/$1: cannot write: File too large\$" ||
        fail "the last line of stderr is not the write error"
      [ -z "$(ls -A "$scratch/target")" ] || fail "left behind: $(ls -A "$scratch/target")"
    }
    (ulimit -f 16 && exec "$cli" keys --data keys_queries.csv --epsilon 1 --delta 1e-6 --repeat 2000 \
      --quiet --output "$scratch/target/keys.txt" >"$out" 2>"$err")
    status=$?
    expect_lost_output keys.txt
    (ulimit -f 16 && exec "$cli" topk --utilities utilities.txt --k 15 --epsilon 0.001 --sensitivity 1 \
      --repeat 300 --quiet --output "$scratch/target/indices.npy" >"$out" 2>"$err")
    status=$?
    expect_lost_output indices.npy
    ;;
  empty_argument)
    # CLI11 2.1 looped forever on an empty argument before a short option (found by
    # tests/fuzz/fuzz_command_line); every empty argument is now refused first, naming its place.
    "$cli" price "" -ox >"$out" 2>"$err"
    status=$?
    expect_error 2 "argument 2 is empty \\(an option or a value left out\\? every option and value has text\\)"
    "$cli" select --utilities utilities.txt --epsilon 1 --sensitivity "" >"$out" 2>"$err"
    status=$?
    expect_error 2 "argument 7 is empty .*"
    ;;
  *)
    echo "faults.sh: unknown case '$fault_case'" >&2
    exit 1
    ;;
esac
exit 0
