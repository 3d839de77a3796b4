#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-region instruction counts of the fused selection kernel, from its sm_90 SASS.

Reads the output of `nvdisasm -c -gi` (SASS with the inlined call chain of every instruction)
for one kernel, splits it into basic blocks, and walks the tile loop as a Markov chain: every
branch whose source line is known takes the probability the scenario gives it (a group passes
the screen, a follower draws, the follower loop runs n times), branches into code that the
exponential mechanism never runs (the permute-and-flip and Laplace cases of race_noise, the
bound table's fallback, the scalar staging of the range's end tiles, the division slow path,
the BRA.DIV fallbacks of a converged warp) are never taken, and every other branch is taken
with probability 1/2. The expected instructions per tile loop iteration, compared between
scenarios, give each region's cost per event (one lane's path: the race's code is almost free
of data-dependent branches, so a warp whose lanes take both sides of each issues within 10 %
more, printed as "union").

    sass_regions.py KERNEL.sass [INCLUDE_DIR]

KERNEL.sass: one kernel's text (from its .text label to the next); INCLUDE_DIR: the include/
folder of the sources it was compiled from (default: this repository's), where the source lines
of each region are looked up by their text. Prints each region's expected instructions and the
per-event costs that fused_pass.cpp and rows.cpp hold.

The rows kernel (select_rows_kernel<float, G, 256> of kernels/select_rows.cu, told by its .text
label) is read the same way: its tile loop is add_tiles inlined at select_rows.cu's call (the
kernels/ folder beside INCLUDE_DIR), inside the loop over the block's rows. It also prints the
instructions per row (the team's reduction, the result's store, the next row's set-up: its spec,
the team word's reset and barrier) and once per block (the bound table's fill), one warp's path
each. Its bound is CheckedTableBound (ScreenBoundTable::of: the fallback for another mechanism
never runs, as in the per-lane kernel), and its warp-wide kernel's word (team_published) lies in
shared memory: the generic atomic's shared-memory path (QSPC, then a CAS loop on the shared word)
is the one taken, its global and local paths never, the CAS succeeding at its first try.
Every kernel's output also gives screen_block, the instructions of the ChaCha20 screen block that
TileScreens computes at steps 0, 32, 64, ... (owner == 0), so that a pass whose warps take fewer
than 32 tiles can be charged a block per 32 steps begun rather than 1/32 of one per tile.

Two kernels are told apart by add_tiles's body. The per-lane kernel (commit e7c9489: each lane
calls score_scanned_group for its own group) gives RegionCosts. The warp-wide kernel (since
commit 4ceede2: add_tiles calling WarpScreenThreshold::score, a warp-uniform threshold, each race
run by the whole warp in race_group, the widest pending group first after every race) gives
WarpCosts: per tile, per tile that passes the screen, per race, per follower-draw issue, per
publish of the grid-wide word, once per warp. Its branches of known meaning: the tile passes
(widest reach >= threshold), the race loop's entry (never empty once the tile passes) and back
edge (one more race), race_group's valid == 0 return and excluded-candidate offers (never), the
follower test (some lane draws), `score != -inf` before the offer (always: the leader offers),
the publish (the threshold rose; lane 0's atomic); the generic atomic's fallbacks for shared and
local memory (after a QSPC) are never taken, the word being in global memory.
"""
import collections
import os
import re
import sys


def parse(path):
    """Instructions in order, each with its address, opcode, guard, branch target and inline
    chain (innermost frame first), and the instruction index of every label."""
    insts, labels, pending, pending_open, chain, cur_labels = [], {}, [], False, [], []
    for raw in open(path):
        line = raw.rstrip('\n')
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)', line)
        if m:
            if not pending_open:
                pending, pending_open = [], True
            pending.append((m.group(1).split('/')[-1], int(m.group(2))))
            continue
        m = re.match(r'^(\.L_x_\d+):', line)
        if m:
            cur_labels.append(m.group(1))
            continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if not m:
            continue
        if pending_open:
            chain, pending_open = list(pending), False
        body, guard = m.group(2).strip(), None
        g = re.match(r'(@!?U?P\w+)\s+(.*)', body)
        if g:
            guard, body = g.group(1), g.group(2)
        t = re.search(r'`\((\.L_x_\d+)\)', body)
        for label in cur_labels:
            labels[label] = len(insts)
        cur_labels = []
        insts.append(dict(addr=int(m.group(1), 16), op=body.split()[0], guard=guard, body=body,
                          target=t.group(1) if t else None, chain=chain))
    return insts, labels


def build_blocks(insts, labels):
    n = len(insts)
    starts = {0} | set(labels.values())
    for k, i in enumerate(insts):
        if i['op'].split('.')[0] in ('BRA', 'EXIT', 'RET', 'CALL') and k + 1 < n:
            starts.add(k + 1)
    starts = sorted(starts)
    blocks, bid = [], {}
    for bi, s in enumerate(starts):
        e = starts[bi + 1] if bi + 1 < len(starts) else n
        blocks.append(dict(start=s, end=e, succ=[]))
        for k in range(s, e):
            bid[k] = bi
    for bi, b in enumerate(blocks):
        last = insts[b['end'] - 1]
        op = last['op']
        if op == 'BRA.DIV':  # taken only by a diverged warp: shuffles and __syncwarp run converged
            b['succ'] = [bi + 1]
        elif op.startswith('BRA'):
            t = bid[labels[last['target']]]
            conditional = last['guard'] is not None or re.match(r'BRA !?P\d', last['body'])
            b['succ'] = [t, bi + 1] if conditional else [t]
        elif op.startswith('EXIT'):
            b['succ'] = [bi + 1] if last['guard'] is not None else []
        elif op.startswith('RET'):
            b['succ'] = []
        elif bi + 1 < len(blocks):
            b['succ'] = [bi + 1]
    return blocks


class SourceLines:
    """The source lines the regions are made of, found by their text (line numbers move)."""

    def __init__(self, include_dir, rows=False, team=256):
        read = lambda rel: open(f'{include_dir}/dpselect/{rel}').read().split('\n')
        self.rows = rows
        # the rows kernel's team size (threads): 256 a block per row, 32 a warp per row (the share
        # of warps that hold a team's member 0: 32 / team)
        self.team = team
        if rows:  # select_rows_kernel: kernels/ beside include/
            self.kernel = open(os.path.join(include_dir, '..', 'kernels', 'select_rows.cu')).read().split('\n')
        else:
            self.kernel = read('detail/fused_select_kernel.cuh')
        self.tiles = read('detail/warp_tiles.cuh')
        self.groups = read('detail/device_groups.cuh')
        # The scoring's definition: detail/screened_scoring.hpp; shard_result.hpp in sources from
        # before it moved (SASS_COMMIT).
        self.scoring_file = ('screened_scoring.hpp' if os.path.exists(f'{include_dir}/dpselect/detail/screened_scoring.hpp')
                             else 'shard_result.hpp')
        self.shard = read(('detail/' if self.scoring_file == 'screened_scoring.hpp' else '') + self.scoring_file)
        find = self.find
        if rows:
            self.top = ('select_rows.cu', find(self.kernel, 'add_tiles<G>('))
            row = find(self.kernel, 'for (std::uint64_t row =')
            self.row_loop = {row, row + 1}  # the statement spans two lines
            # One warp of the team's eight runs these (member 0: the word's reset, the store); every
            # warp where a team is a warp
            self.member0 = {k + 1 for k, line in enumerate(self.kernel) if 'if (member == 0)' in line}
        else:
            self.top = ('fused_select_kernel.cuh', find(self.kernel, 'add_tiles<G>('))
        add_tiles = find(self.tiles, 'void add_tiles(')
        self.tile_loop = find(self.tiles, 'for (std::uint64_t tile = first;', add_tiles)
        self.screen_next = find(self.tiles, 'screens.next(', add_tiles)
        self.scan_call = find(self.tiles, 'scan_tile_group(spec', add_tiles)
        self.add_tiles = (add_tiles, find(self.tiles, '\n}', add_tiles, whole=True))
        body = '\n'.join(self.tiles[add_tiles - 1:self.add_tiles[1]])
        self.kind = 'warp' if 'threshold.score<' in body else 'per-lane'
        if self.kind == 'warp':
            self.warp_lines(add_tiles)
            return
        self.score_call = find(self.tiles, 'score_scanned_group<', add_tiles)
        self.scan_fallback = find(self.tiles, 'return scan_group(spec, group, groups.lanes(group)')
        scalar = find(self.tiles, '// Scalar loads at the ends')
        self.scalar_staging = (scalar, find(self.tiles, '\n}', scalar, whole=True))
        self.owner = find(self.groups, 'if (owner == 0)')
        # the fallback's line: the one after the table's (the statement spans two)
        self.bounds_of = find(self.groups, 'return spec.mechanism == mechanism ?') + 1
        self.bound_lines = {find(self.shard, 'const double e_v = noise::race_exponential_lower_bound(')
                            if self.scoring_file == 'shard_result.hpp' else
                            find(self.shard, 'const double e_v = race_exponential_lower_bound('),
                            find(self.shard, 'return e_v == 0.0 ? kInfinity')}
        self.other_mechanisms = {find(self.shard, 'case Mechanism::permute_and_flip:'),
                                 find(self.shard, 'default: return laplace_from_race')}
        scored = find(self.shard, 'void score_scanned_group(')
        after = lambda text: find(self.shard, text, scored)
        self.excluded = {after('for (unsigned int lanes = scan.excluded;'), after('sink.offer(-kInfinity')}
        self.screen_test = after('if (scan.valid == 0 || fma_rn(')
        self.race = after('const GroupRace race = group_race')
        self.leader_noise = {after('const double leader_noise ='), after('const double follower_bound =')}
        self.loop = after('for (unsigned int lanes = scan.valid;')
        self.leader_test = after('if (lane == race.leader_lane)')
        self.leader_offer = after('sink.offer(fma_rn(spec.score_scale, u, leader_noise)')
        self.follower_test = after('} else if (!(fma_rn(spec.score_scale, u, follower_bound)')
        self.follower_draw = after('race_noise(spec.mechanism, follower_time')
        self.loop_body = set(range(self.loop, self.follower_draw + 3)) - {self.leader_offer, self.follower_draw}

    def warp_lines(self, add_tiles):
        """The warp-wide kernel's lines: WarpScreenThreshold::score and race_group."""
        find = self.find
        g = self.groups
        self.score_call = find(self.tiles, 'threshold.score<', add_tiles)
        score = find(g, 'void score(')
        self.pass_test = find(g, 'if (widest_reach < threshold_) return;', score)
        self.loop = find(g, 'while (pending != 0)', score)
        self.race_call = find(g, 'threshold = race_group<Blocks>(', score)
        self.publish_test = find(g, 'if (threshold > threshold_) {', score)
        self.publish = find(g, 'published_.fetch_max(', score)
        self.pass_lines = set(range(self.pass_test + 1, self.loop))  # the threshold, the pending lanes
        # the loop's own code: the widest pending lane, the race's arguments, the pending lanes left
        self.loop_lines = set(range(self.loop, self.publish_test)) - {self.race_call}
        race = find(g, 'double race_group(')
        self.race_end = find(g, 'return warp_max(own > follower_threshold', race)
        # The race's body: in race_group itself (commit 4ceede2 on), or since the race is shared with
        # the top-k kernel, in race_group_by_warp, which race_group calls.
        shared = any('double race_group_by_warp(' in line for line in g)
        body = find(g, 'double race_group_by_warp(') if shared else race
        self.race_by_warp_call = find(g, 'race_group_by_warp<Blocks, FollowerScreen::by_leader>(', race) if shared else None
        self.excluded_offer = find(g, 'if (threshold == -kInfinity && ((excluded >> lane)', body)
        self.valid_test = find(g, 'if (valid == 0) return threshold;' if shared else 'if (valid == 0) return warp_max(',
                               body)
        # The race block: drawn in the race's body (commits 4ceede2 to fa66307), or since, by the
        # lanes that own the tile's pending groups before the first race (own_group_race, called in
        # score()); own_race_draw is its branch (draw ? group_race : nothing), and race_block_line
        # the block's draw inside group_race.
        own = any('own_group_race<Blocks>(' in line for line in g)
        self.own_race_call = find(g, 'own_group_race<Blocks>(', score) if own else None
        self.own_race_draw = find(g, 'return draw ? group_race<Blocks>(') if own else None
        self.race_block_line = find(self.shard, 'const RandomBlock race_block = blocks.at(')
        self.race = self.own_race_call if own else find(g, 'const GroupRace race = group_race<Blocks>(', body)
        self.leader_noise = find(g, 'const double leader_noise = race_noise(', body)
        self.follower_test = find(g, 'if (in_group && !leader && !(fma_rn(', body)
        self.follower_draw = find(g, 'race_noise(spec.mechanism, follower_time<Blocks>(', body)
        self.offer = find(g, 'if (score != -kInfinity) sink.offer(score, index);' if shared else
                          'if (score != -kInfinity) accumulator.offer(score, index);', body)
        self.scan_fallback = find(self.tiles, 'return scan_group(spec, group, groups.lanes(group)')
        scalar = find(self.tiles, '// Scalar loads at the ends')
        self.scalar_staging = (scalar, find(self.tiles, '\n}', scalar, whole=True))
        self.owner = find(g, 'if (owner == 0)')
        self.other_mechanisms = {find(self.shard, 'case Mechanism::permute_and_flip:'),
                                 find(self.shard, 'default: return laplace_from_race')}
        if self.rows:  # CheckedTableBound: ScreenBoundTable::of's fallback, as in the per-lane kernel
            self.bounds_of = find(g, 'return spec.mechanism == mechanism ?') + 1
            self.bound_lines = {find(self.shard, 'const double e_v = race_exponential_lower_bound('),
                                find(self.shard, 'return e_v == 0.0 ? kInfinity')}

    @staticmethod
    def find(lines, text, after=0, whole=False):
        if whole:  # the end of the function that starts at line `after`: the first line '}'
            for k in range(after, len(lines)):
                if lines[k] == '}':
                    return k + 1
            raise RuntimeError('no end of function')
        for k in range(after - 1 if after else 0, len(lines)):
            if text in lines[k]:
                return k + 1  # 1-based, as the line table
        raise RuntimeError(f'source line not found: {text!r} (the kernel is neither the per-lane nor the '
                           'warp-wide kernel these regions describe: take its sources from a commit that has one)')


def frames(i):
    return list(reversed(i['chain']))  # outermost first


def innermost(i):
    return i['chain'][0] if i['chain'] else None


# Code the exponential mechanism never runs on ordinary data: the other two cases of race_noise,
# the excluded-candidate offers, the lane-by-lane scan of a group cut by the range or holding a
# NaN, the scalar staging of the range's first and last tiles, and ScreenBoundTable::of's
# fallback (a mechanism other than the table's: never within one release).
def is_cold(i, src):
    fr = frames(i)
    if src.kind == 'warp':
        return is_cold_warp(i, src)
    for f in fr:
        if f[0] == src.scoring_file and (f[1] in src.other_mechanisms or f[1] in src.excluded):
            return True
        if f[0] == 'warp_tiles.cuh' and (f[1] == src.scan_fallback or
                                          src.scalar_staging[0] <= f[1] <= src.scalar_staging[1]):
            return True
    in_bound = any(f[0] == src.scoring_file and f[1] in src.bound_lines for f in fr)
    if ('device_groups.cuh', src.bounds_of) in fr and in_bound:
        return True
    return False


# The warp-wide kernel's cold code: the other mechanisms' race_noise, the scan's fallback and the
# scalar staging (the generic atomic's fallbacks for other memory spaces are found by their QSPC,
# in Kernel; race_group's excluded offers and valid == 0 return by their branch rules).
def is_cold_warp(i, src):
    fr = frames(i)
    for f in fr:
        if f[0] == src.scoring_file and f[1] in src.other_mechanisms:
            return True
        if f[0] == 'warp_tiles.cuh' and (f[1] == src.scan_fallback or
                                          src.scalar_staging[0] <= f[1] <= src.scalar_staging[1]):
            return True
    if src.rows:  # the rows kernel's CheckedTableBound: the fallback for another mechanism
        in_bound = any(f[0] == src.scoring_file and f[1] in src.bound_lines for f in fr)
        if ('device_groups.cuh', src.bounds_of) in fr and in_bound:
            return True
    return False


def region_of_warp(fr, src):
    f2 = fr[1]
    if f2 == ('warp_tiles.cuh', src.screen_next):
        return 'screen_gen'
    if f2 == ('warp_tiles.cuh', src.scan_call):
        return 'stage_scan'
    if f2 != ('warp_tiles.cuh', src.score_call):
        return 'tile_loop'
    f3 = fr[2] if len(fr) > 2 else None
    if f3 is None or f3[0] != 'device_groups.cuh':
        return 'screen_test'
    if f3[1] == src.race_call:
        f4 = fr[3] if len(fr) > 3 else None
        if f4 is not None and src.race_by_warp_call is not None and f4 == ('device_groups.cuh', src.race_by_warp_call):
            f4 = fr[4] if len(fr) > 4 else None  # race_group -> race_group_by_warp: its line
        if f4 is not None and f4[0] == 'device_groups.cuh':
            if f4[1] == src.race:
                return 'race_block'
            if f4[1] == src.leader_noise:
                return 'leader_noise'
            if f4[1] == src.follower_draw:
                return 'follower_draw'
        return 'race_rest'  # argument shuffles, utility load, leader score, tests, offer, warp max
    if src.own_race_call is not None and f3[1] == src.own_race_call:
        return 'race_block'  # own_group_race: every pending lane's race block, E_V and leader
    if f3[1] in src.loop_lines:
        return 'race_loop'
    if f3[1] in src.pass_lines:
        return 'pass'
    if src.publish_test <= f3[1] <= src.publish + 1:
        return 'publish'
    return 'screen_test'  # the bound, the word's load and shuffle, the reach, its warp max, the test


def region_of(i, src):
    fr = frames(i)
    if len(fr) < 2 or fr[0] != src.top:
        return 'outside'
    if src.kind == 'warp':
        return region_of_warp(fr, src)
        return 'outside'
    f2 = fr[1]
    if f2 == ('warp_tiles.cuh', src.screen_next):
        return 'screen_gen'
    if f2 == ('warp_tiles.cuh', src.scan_call):
        return 'stage_scan'
    if f2 == ('warp_tiles.cuh', src.score_call):
        f3 = fr[2] if len(fr) > 2 else None
        if f3 is not None and f3[0] == src.scoring_file:
            if f3[1] == src.race:
                return 'race_block'
            if f3[1] in src.leader_noise:
                return 'leader_noise'
            if f3[1] == src.leader_offer:
                return 'leader_offer'
            if f3[1] == src.follower_draw:
                return 'follower_draw'
            if f3[1] in src.loop_body:
                return 'follower_loop'
        return 'screen_test'
    return 'tile_loop'


def cub_lines(path):
    """The rows kernel's team reduction (cub::BlockReduce): the lines of its lane tests, found in
    the CUB headers the SASS names, as {(file, line): the share of warps that run the body}."""
    files = {}
    for line in open(path):
        m = re.match(r'\s*//## File "([^"]+)"', line)
        if m and m.group(1).split('/')[-1] not in files:
            files[m.group(1).split('/')[-1]] = m.group(1)
    tests = (('block_reduce_warp_reductions.cuh', 'if (lane_id == 0)', 1.0),  # every warp's lane 0
             ('block_reduce_warp_reductions.cuh', 'if (linear_tid == 0)', 1 / 8),  # warp 0 alone
             ('warp_reduce_shfl.cuh', 'if (offset + lane_id <= last_lane)', 1.0))  # some lanes merge
    found = {}
    for name, text, share in tests:
        if name in files and os.path.exists(files[name]):
            for k, line in enumerate(open(files[name]).read().split('\n')):
                if text in line:
                    found[(name, k + 1)] = share
    return found


class Kernel:
    def __init__(self, path, src):
        self.insts, labels = parse(path)
        self.cub = cub_lines(path) if src.rows else {}
        self.blocks = build_blocks(self.insts, labels)
        self.src = src
        self.cold = []
        for b in self.blocks:
            ins = self.insts[b['start']:b['end']]
            cold = any(i['op'].startswith('CALL') for i in ins)  # the division's slow path
            # the generic atomic's test for shared or local memory: the fused pass's word is in
            # global memory (the rows kernel's in shared memory: its rules take that path)
            cold = cold or (not src.rows and any(i['op'].startswith('QSPC') for i in ins))
            # by attribution only for blocks of 4 or more: a lone BSYNC at a join says nothing
            cold = cold or (len(ins) >= 4 and 2 * sum(is_cold(i, src) for i in ins) > len(ins))
            self.cold.append(cold)
        self.back, self.head = None, None
        for bi, b in enumerate(self.blocks):
            last = self.insts[b['end'] - 1]
            if last['op'].startswith('BRA') and innermost(last) == ('warp_tiles.cuh', src.tile_loop):
                for s in b['succ']:
                    if s < bi:
                        self.back, self.head = bi, s
        self.dead = self.propagate_dead({self.back})

    def propagate_dead(self, keep):
        dead = list(self.cold)
        changed = True
        while changed:
            changed = False
            for bi, b in enumerate(self.blocks):
                if not dead[bi] and bi not in keep and b['succ'] and all(dead[s] for s in b['succ']):
                    dead[bi] = changed = True
        return dead

    def count(self, b, test):
        return sum(1 for k in range(b['start'], b['end']) if test(frames(self.insts[k])))

    def ahead(self, bi, test):
        """Instructions satisfying test(frames) in the blocks reachable from block bi by forward
        edges only (no loop back edge), up to the tile loop's back edge: what a branch side leads to."""
        seen, stack, n = set(), [bi], 0
        while stack:
            x = stack.pop()
            if x in seen or self.dead[x]:
                continue
            seen.add(x)
            n += self.count(self.blocks[x], test)
            if x != self.back:
                stack.extend(s for s in self.blocks[x]['succ'] if s > x)
        return n

    def shared_atomic_rule(self, bi, succs):
        """The rows kernel's publish, a generic atomic max on a shared-memory word: the global
        ATOM fails, QSPC finds shared memory, the CAS loop's load finds a smaller word and its
        CAS succeeds; None where block bi is none of these."""
        if not self.src.rows:
            return None
        ins = self.insts[self.blocks[bi]['start']:self.blocks[bi]['end']]
        ops = [i['op'] for i in ins]
        if any(o.startswith('ATOM.E') for o in ops) or any(o.startswith('QSPC') for o in ops):
            return [(s, 1.0 if s == bi + 1 else 0.0) for s in succs]  # on to the next test
        if any(o.startswith('ATOMS.CAST') for o in ops):  # success: out of the loop
            return [(s, 0.0 if s <= bi else 1.0) for s in succs]
        if any(o.startswith('LDS') for o in ops) and any(f[0].startswith('cuda_ptx') for f in ins[-1]['chain']):
            return [(s, 1.0 if s == bi + 1 else 0.0) for s in succs]  # the word is smaller: CAS
        return None

    def row_rule(self, bi, succs, next_row):
        """The rows kernel's loop over the block's rows: next_row, the back edge is taken (the
        walk from one row's end to the next row's tile loop); else the loop ends. The tile
        loop's entry test, where a row's tiles are not empty, enters the loop."""
        if not self.src.rows:
            return None
        inn = innermost(self.insts[self.blocks[bi]['end'] - 1])
        if inn and inn[0] == 'select_rows.cu' and inn[1] in self.src.row_loop:
            back = [s for s in succs if s < bi]
            if back:
                return [(s, (1.0 if next_row else 0.0) if s in back else (0.0 if next_row else 1.0)) for s in succs]
        if inn == ('warp_tiles.cuh', self.src.tile_loop) and bi < self.head:  # the row's tiles exist
            return [(s, 1.0 if s <= self.head else 0.0) for s in succs]
        # `if (...) body`: the branch skips the body, which follows it
        share = self.cub.get(inn)
        if share is None and inn and inn[0] == 'select_rows.cu' and inn[1] in self.src.member0:
            share = min(1.0, 32 / self.src.team)
        if share is not None and bi + 1 in succs:
            return [(s, share if s == bi + 1 else 1 - share) for s in succs]
        return None

    def warp_probabilities(self, pass_p, trips, draw_p, publish_p, owner_p=1 / 32, next_row=True):
        """Branch rules of the warp-wide kernel in one scenario."""
        blocks, insts, src = self.blocks, self.insts, self.src

        def rule(bi, succs):
            if len(succs) <= 1:
                return [(s, 1.0) for s in succs]
            special = self.shared_atomic_rule(bi, succs) or self.row_rule(bi, succs, next_row)
            if special:
                return special
            inn = innermost(insts[blocks[bi]['end'] - 1])

            def pick(line, p, file='device_groups.cuh'):  # the side that leads to `line` is 'yes'
                sc = sorted(((self.ahead(s, lambda fr: (file, line) in fr), s) for s in succs), reverse=True)
                if len(sc) != 2 or sc[0][0] == sc[1][0]:
                    raise RuntimeError(f'branch rule ambiguous at block {bi} ({inn})')
                return [(sc[0][1], p), (sc[1][1], 1 - p)]
            if inn == ('device_groups.cuh', src.owner):  # TileScreens<chacha20>: owner == 0
                sc = sorted(((self.count(blocks[s], lambda fr: any(f[0] == 'chacha20.hpp' for f in fr)), s)
                             for s in succs), reverse=True)
                return [(sc[0][1], owner_p), (sc[1][1], 1 - owner_p)]
            if inn == ('device_groups.cuh', src.pass_test):  # the widest reach clears the threshold
                return pick(src.race, pass_p)
            if src.own_race_draw is not None and inn == ('device_groups.cuh', src.own_race_draw):
                return pick(src.race_block_line, 1.0, file=src.scoring_file)  # some lane is pending
            if inn[0] == 'device_groups.cuh' and inn[1] in src.loop_lines:
                if any(s < bi for s in succs):  # the back edge: another pending lane to race
                    back = [s for s in succs if s < bi][0]
                    return [(back, 1 - 1 / trips), ([s for s in succs if s != back][0], 1 / trips)]
                if inn[1] == src.loop:  # the entry: the widest lane is always pending
                    return pick(src.race_call, 1.0)
            if inn == ('device_groups.cuh', src.valid_test):  # valid == 0: never
                return pick(src.leader_noise, 1.0)
            if inn == ('device_groups.cuh', src.excluded_offer):  # excluded candidates: never
                return pick(src.excluded_offer, 0.0)
            if inn == ('device_groups.cuh', src.follower_test):  # some follower draws
                return pick(src.follower_draw, draw_p)
            if inn == ('device_groups.cuh', src.offer):  # the leader always offers
                return pick(src.offer, 1.0)
            if inn == ('device_groups.cuh', src.publish_test):  # the threshold rose (and lane 0)
                return pick(src.publish, publish_p)
            return [(s, 1.0 / len(succs)) for s in succs]
        return rule

    def probabilities(self, pass_p, draw_p, trips, owner_p=1 / 32, next_row=True):
        """Branch rules of one scenario: bi, live successors -> [(successor, p)]."""
        blocks, insts = self.blocks, self.insts

        def rule(bi, succs):
            if len(succs) <= 1:
                return [(s, 1.0) for s in succs]
            special = self.row_rule(bi, succs, next_row)
            if special:
                return special
            inn = innermost(insts[blocks[bi]['end'] - 1])
            src = self.src

            def pick(score, p):  # the successor that scores higher is the 'yes' side
                sc = sorted(((score(blocks[s]), s) for s in succs), reverse=True)
                if len(sc) != 2 or sc[0][0] == sc[1][0]:
                    raise RuntimeError(f'branch rule ambiguous at block {bi} ({inn})')
                return [(sc[0][1], p), (sc[1][1], 1 - p)]
            has = lambda frame: (lambda b: self.count(b, lambda fr: frame in fr))
            if inn == ('device_groups.cuh', src.owner):  # TileScreens<chacha20>: owner == 0
                return pick(lambda b: self.count(b, lambda fr: any(f[0] == 'chacha20.hpp' for f in fr)), owner_p)
            if inn == (src.scoring_file, src.screen_test):  # the screen test
                # the rows kernel tests scan.valid == 0 on a branch of its own, before the reach:
                # never taken (every group is whole and valid), on to the reach's test
                nxt = [s for s in succs if self.src.rows and s == bi + 1 and
                       innermost(insts[blocks[s]['end'] - 1]) == inn and insts[blocks[s]['end'] - 1]['op'] == 'BRA']
                if nxt:
                    return [(s, 1.0 if s == nxt[0] else 0.0) for s in succs]
                return pick(has((src.scoring_file, src.race)), pass_p)
            if inn == (src.scoring_file, src.leader_test):  # lane == race.leader_lane
                return pick(has((src.scoring_file, src.leader_offer)), 1 / trips)
            if inn == (src.scoring_file, src.follower_test):  # a follower within reach draws
                return pick(has((src.scoring_file, src.follower_draw)), draw_p)
            if inn == (src.scoring_file, src.loop):  # the follower loop's back edge
                return pick(lambda b: 1 if blocks.index(b) < bi else 0, 1 - 1 / trips)
            return [(s, 1.0 / len(succs)) for s in succs]
        return rule

    def visits(self, start, stop, rule):
        v = [0.0] * len(self.blocks)
        frontier = {start: 1.0}
        for _ in range(100000):
            nxt = collections.defaultdict(float)
            for bi, m in frontier.items():
                v[bi] += m
                if bi in stop:
                    continue
                succs = [s for s in self.blocks[bi]['succ'] if not self.dead[s]]
                for s, p in rule(bi, succs):
                    nxt[s] += m * p
            frontier = {k: x for k, x in nxt.items() if x > 1e-13}
            if not frontier:
                break
        return v

    def per_region(self, pass_p, draw_p, trips=32, rule=None, owner_p=1 / 32):
        v = self.visits(self.head, {self.back}, rule or self.probabilities(pass_p, draw_p, trips, owner_p))
        c = collections.Counter()
        for bi, b in enumerate(self.blocks):
            if v[bi]:
                for k in range(b['start'], b['end']):
                    c[region_of(self.insts[k], self.src)] += v[bi]
        return c

    def union(self, entry, exits):
        seen, stack = set(), [entry]
        while stack:
            x = stack.pop()
            if x in seen or self.dead[x] or x in exits:
                continue
            seen.add(x)
            stack.extend(self.blocks[x]['succ'])
        return sum(self.blocks[x]['end'] - self.blocks[x]['start'] for x in seen)

    def rule_block(self, line):
        for bi, b in enumerate(self.blocks):
            last = self.insts[b['end'] - 1]
            if last['op'].startswith('BRA') and innermost(last) == (self.src.scoring_file, line) and len(b['succ']) == 2:
                return bi
        raise RuntimeError(f'no branch at {self.src.scoring_file}:{line}')

    def once_per_warp(self, next_row=False):
        """Instructions before the tile loop (the bound table's fill) and after it (the block
        reduction), one lane's path: paid once per warp. The rows kernel, next_row: from the end
        of a row's tile loop to the next row's (the reduction, the store, the next row's
        set-up), where the walk stops; else from its end to the kernel's exit."""
        if self.src.kind != 'warp':
            rule = self.probabilities(0, 0, 32, next_row=next_row)
        else:
            rule = self.warp_probabilities(0, 1, 0, 0, next_row=next_row)
        before = self.visits(0, {self.head}, lambda bi, s: rule(bi, s) if bi != self.head else [])
        pre = sum(before[bi] * (b['end'] - b['start']) for bi, b in enumerate(self.blocks) if bi != self.head)
        exit_block = [s for s in self.blocks[self.back]['succ'] if s != self.head][0]
        after = self.visits(exit_block, {self.head} if next_row else set(), rule)
        post = sum(after[bi] * (b['end'] - b['start']) for bi, b in enumerate(self.blocks) if bi != self.head)
        return pre, post

    def row_costs(self):
        """The rows kernel, one warp: instructions per row (a row's end to the next row's tile
        loop) and once per block (before the first row's tile loop and after the last row's,
        less one row's), so that R rows cost once + R * per_row."""
        pre, per_row = self.once_per_warp(next_row=True)
        _, end = self.once_per_warp(next_row=False)
        return pre + end - per_row, per_row

    def screen_block(self, scenario):
        """The ChaCha20 screen block of TileScreens (owner == 0): a scenario's instructions with
        the block computed at every step less those with it never computed."""
        return sum(scenario(1.0).values()) - sum(scenario(0.0).values())

    def row_suffix(self, scenario):
        """screen_block=, and for the rows kernel per_row= and once_per_block=, for the last line."""
        text = f' screen_block={self.screen_block(scenario):.1f}'
        if self.src.rows:
            once, per_row = self.row_costs()
            text += f' per_row={per_row:.0f} once_per_block={once:.0f}'
        return text


def main():
    import os
    path = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    include_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, '..', '..', 'include')
    with open(path) as f:
        label = next((line for line in f if line.startswith('.text.')), '')
    team = re.search(r'select_rows_kernel\w*?Li(\d+)E', label)
    src = SourceLines(include_dir, rows=team is not None, team=int(team.group(1)) if team else 256)
    k = Kernel(path, src)
    if src.kind == 'warp':
        return main_warp(path, k)
    base = k.per_region(0, 0)
    race32 = k.per_region(1, 0, 32)
    race16 = k.per_region(1, 0, 16)
    draw32 = k.per_region(1, 1, 32)
    total = lambda c: sum(c.values())
    iteration = (total(race32) - total(race16)) / 16
    offer = race32['leader_offer']
    race = total(race32) - total(base) - 32 * iteration - offer
    follower = (total(draw32) - total(race32)) / 31
    b_screen, b_leader, b_follower, b_loop = (
        k.rule_block(x) for x in (src.screen_test, src.leader_test, src.follower_test, src.loop))

    def yes(bi, line):  # the successor of a rule's branch that runs `line`
        return max(k.blocks[bi]['succ'],
                   key=lambda s: k.count(k.blocks[s], lambda fr: (src.scoring_file, line) in fr))
    race_union = k.union(yes(b_screen, src.race), {b_leader})
    follower_union = k.union(yes(b_follower, src.follower_draw), {b_loop, b_loop - 1})
    pre, post = k.once_per_warp()
    print(f'# {path}: {len(k.insts)} instructions, {len(k.blocks)} blocks; tile loop head block {k.head}')
    print('# expected warp instructions per tile iteration, by source region, in three scenarios:')
    print('#   %-14s %10s %10s %10s' % ('region', 'no race', 'race', 'race+draws'))
    for r in sorted(set(base) | set(race32) | set(draw32)):
        print('#   %-14s %10.1f %10.1f %10.1f' % (r, base[r], race32[r], draw32[r]))
    print('#   %-14s %10.1f %10.1f %10.1f' % ('total', total(base), total(race32), total(draw32)))
    print(f'#   union of paths: race block + leader noise {race_union}, follower draw {follower_union}')
    print('# per event:')
    for name, parts in (('tile', ('stage_scan', 'screen_gen', 'screen_test', 'tile_loop', 'outside')),):
        print('#   tile =', ' + '.join(f'{p} {base[p]:.1f}' for p in parts))
    print(f'tile={total(base):.1f} race={race:.1f} loop_iteration={iteration:.1f} leader_offer={offer:.1f} '
          f'follower_draw={follower:.1f} once_per_warp={pre + post:.0f} stage_scan={base["stage_scan"]:.1f} '
          f'screen_gen={base["screen_gen"]:.1f} screen_test={base["screen_test"]:.1f}' +
          k.row_suffix(lambda p: k.per_region(0, 0, owner_p=p)))


def main_warp(path, k):
    """The warp-wide kernel: scenarios S(pass, races, draw, publish), each event's cost the
    difference of two."""
    src = k.src
    total = lambda c: sum(c.values())
    S = lambda *a: k.per_region(0, 0, rule=k.warp_probabilities(*a))
    base = S(0, 1, 0, 0)
    race1 = S(1, 1, 0, 0)     # the tile passes, one race, no follower draws
    race2 = S(1, 2, 0, 0)     # two races
    draw = S(1, 1, 1, 0)      # one race in which some follower draws
    publish = S(1, 1, 0, 1)   # one race, no draw, the threshold rose: lane 0 publishes
    race_cost = total(race2) - total(race1)
    passing = total(race1) - total(base) - race_cost
    draw_cost = total(draw) - total(race1)
    publish_cost = total(publish) - total(race1)
    b_follower = [bi for bi, b in enumerate(k.blocks) if k.insts[b['end'] - 1]['op'].startswith('BRA') and
                  innermost(k.insts[b['end'] - 1]) == ('device_groups.cuh', src.follower_test) and
                  len(b['succ']) == 2][0]
    yes = max(k.blocks[b_follower]['succ'],
              key=lambda s: k.ahead(s, lambda fr: ('device_groups.cuh', src.follower_draw) in fr))
    no = [s for s in k.blocks[b_follower]['succ'] if s != yes][0]
    follower_union = k.union(yes, {no})
    pre, post = k.once_per_warp()
    print(f'# {path}: {len(k.insts)} instructions, {len(k.blocks)} blocks; tile loop head block {k.head} '
          '(warp-wide kernel: WarpScreenThreshold)')
    print('# expected warp instructions per tile iteration, by source region, in five scenarios:')
    cols = (('no pass', base), ('one race', race1), ('two races', race2), ('race+draw', draw),
            ('race+publish', publish))
    print('#   %-14s' % 'region' + ''.join('%13s' % c for c, _ in cols))
    for r in sorted(set().union(*(c for _, c in cols))):
        print('#   %-14s' % r + ''.join('%13.1f' % c[r] for _, c in cols))
    print('#   %-14s' % 'total' + ''.join('%13.1f' % total(c) for _, c in cols))
    print(f'#   union of paths: follower draw {follower_union}')
    print('# per event:')
    print('#   tile =', ' + '.join(f'{p} {base[p]:.1f}' for p in
                                   ('stage_scan', 'screen_gen', 'screen_test', 'tile_loop', 'outside')))
    print('#   race =', ' + '.join(f'{p} {race2[p] - race1[p]:.1f}' for p in
                                   ('race_loop', 'race_block', 'leader_noise', 'race_rest')))
    print(f'tile={total(base):.1f} pass={passing:.1f} race={race_cost:.1f} '
          f'follower_draw={draw_cost:.1f} publish={publish_cost:.1f} once_per_warp={pre + post:.0f} '
          f'stage_scan={base["stage_scan"]:.1f} '
          f'screen_gen={base["screen_gen"]:.1f} screen_test={base["screen_test"]:.1f}' +
          k.row_suffix(lambda p: k.per_region(0, 0, rule=k.warp_probabilities(0, 1, 0, 0, owner_p=p))))


if __name__ == '__main__':
    main()
