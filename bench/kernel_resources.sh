#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Static evidence of the kernels' shape, without a GPU: for every kernel in a CUDA build of the
# library, its registers, stack frame, local memory and shared memory (cuobjdump -res-usage), and
# from its SASS its size in instructions, the mix of global loads (32-bit LDG.E against 64- and
# 128-bit LDG.E.64/.128) and local-memory traffic (LDL/STL: a stack array or a spill on the hot
# path).
#
#   bench/kernel_resources.sh [BUILD_DIR]        (default: build/default, the CUDA preset)
#
# Needs cuobjdump: the CUDA Toolkit's, or PyPI's nvidia-cuda-cuobjdump in a virtual environment
# (python3 -m venv .venv-cuda && .venv-cuda/bin/pip install nvidia-cuda-cuobjdump
# nvidia-cuda-nvdisasm; the script finds it there, or set CUOBJDUMP). Prints one Markdown table on
# stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build/default}
library=$build/libdpselect.a
[[ -f $library ]] || { echo "kernel_resources: no $library (build the default preset with nvcc)" >&2; exit 2; }

cuobjdump=${CUOBJDUMP:-}
if [[ -z $cuobjdump ]]; then
  cuobjdump=$(command -v cuobjdump || true)
  [[ -n $cuobjdump ]] || cuobjdump=$(ls .venv*/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump 2>/dev/null | head -n 1 || true)
fi
[[ -x $cuobjdump ]] || { echo "kernel_resources: cuobjdump not found (see the comment at the top)" >&2; exit 2; }
# cuobjdump -sass runs nvdisasm, which PyPI ships in a package of its own
# (nvidia-cuda-nvdisasm) into the same folder: look there first.
export PATH="$(dirname "$cuobjdump"):$PATH"
command -v nvdisasm > /dev/null ||
  { echo "kernel_resources: nvdisasm not found (pip install nvidia-cuda-nvdisasm beside cuobjdump)" >&2; exit 2; }

resources=$(mktemp)
sass=$(mktemp)
trap 'rm -f "$resources" "$sass"' EXIT
"$cuobjdump" -res-usage "$library" > "$resources" 2>/dev/null
"$cuobjdump" -sass "$library" > "$sass" 2>/dev/null

echo "| kernel | registers | stack bytes | local bytes | shared bytes | SASS instructions | LDG 32-bit | LDG 64-bit | LDG 128-bit | LDL | STL |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
# One row per kernel instance (a template instance may appear in several translation units: the
# first is kept). The name is demangled and shortened to its function and first template
# argument's last component, which is what tells the instances apart here.
awk '
  FNR == 1 { file++ }
  file == 1 && /Function / { name = $2; sub(/:$/, "", name); next }
  file == 1 && /REG:/ {
    if (!(name in regs)) {
      order[++kernels] = name
      for (i = 1; i <= NF; i++) { split($i, kv, ":"); value[kv[1]] = kv[2] }
      regs[name] = value["REG"]; stack[name] = value["STACK"]; local_bytes[name] = value["LOCAL"]
      shared[name] = value["SHARED"]
    }
    next
  }
  file == 2 && /Function :/ { current = $3; if (current in seen_sass) current = ""; else seen_sass[current] = 1; next }
  file == 2 && current != "" {
    if ($0 ~ /^ +\/\*[0-9a-f]+\*\/ /) instructions[current]++
    if (match($0, /LDG\.E(\.[A-Z0-9]+)*/)) {
      op = substr($0, RSTART, RLENGTH)
      if (op ~ /\.128/) ldg128[current]++
      else if (op ~ /\.64/) ldg64[current]++
      else if (op !~ /\.(U8|S8|U16|S16)/) ldg32[current]++
    }
    if ($0 ~ / LDL(\.| )/) ldl[current]++
    if ($0 ~ / STL(\.| )/) stl[current]++
  }
  END {
    for (k = 1; k <= kernels; k++) {
      n = order[k]
      printf "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", n, regs[n], stack[n], local_bytes[n], shared[n],
             instructions[n], ldg32[n], ldg64[n], ldg128[n], ldl[n], stl[n]
    }
  }' "$resources" "$sass" |
while IFS=$'\t' read -r mangled registers stack_bytes local_bytes shared_bytes sass_count l32 l64 l128 ldl stl; do
  demangled=$(c++filt "$mangled")
  # "void dpselect::detail::fused_select_kernel<dpselect::detail::ArraySource<float>, 256>(...)"
  # -> "fused_select_kernel<ArraySource<float>, 256>"
  # Generator and noise-shape template arguments demangle as "(dpselect::Generator)0": named first
  # (random_key.hpp declares chacha20 = 0, philox = 1; continuous_noise.hpp laplace = 0, normal = 1,
  # generalized_gaussian = 2), since the argument list is cut at the first parenthesis.
  short=$(sed -E 's/\(dpselect::Generator\)0/chacha20/g; s/\(dpselect::Generator\)1/philox/g; s/\(dpselect::continuous::NoiseShape\)0/laplace/g; s/\(dpselect::continuous::NoiseShape\)1/normal/g; s/\(dpselect::continuous::NoiseShape\)2/generalized_gaussian/g; s/\(anonymous namespace\):://g; s/^void //; s/\(.*$//; s/(dpselect::detail::|dpselect::|cub::CUB_[0-9_A-Z]+::detail::|cub::CUB_[0-9_A-Z]+::)//g' <<< "$demangled")
  printf '| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${short:0:110}" "$registers" "$stack_bytes" \
    "$local_bytes" "$shared_bytes" "$sass_count" "$l32" "$l64" "$l128" "$ldl" "$stl"
done
