#!/usr/bin/env python3
"""Writes the binary fixtures of the dpselect command tests from the text ones (run once; the
outputs are committed). No NumPy needed: .npy v1.0 is a small header plus raw data."""
import struct
from pathlib import Path

HERE = Path(__file__).parent


def text_values(name):
    lines = (line.strip() for line in (HERE / name).read_text().splitlines())
    return [float(line) for line in lines if line and not line.startswith("#")]


def write_npy(name, code, values, shape, fortran_order=False):
    """`code` is the struct code of the element type: d, f, q or i."""
    descr = {"d": "<f8", "f": "<f4", "q": "<i8", "i": "<i4"}[code]
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran_order, "(%d,)" % shape[0] if len(shape) == 1 else str(tuple(shape)))
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"  # pad the preamble to 64 bytes
    data = struct.pack("<%d%s" % (len(values), code), *values)
    (HERE / name).write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                              header.encode("latin1") + data)


utilities = text_values("utilities.txt")
(HERE / "utilities.f32").write_bytes(struct.pack("<%df" % len(utilities), *utilities))
(HERE / "utilities.f64").write_bytes(struct.pack("<%dd" % len(utilities), *utilities))
write_npy("utilities.npy", "d", utilities, [len(utilities)])
write_npy("utilities_f4.npy", "f", utilities, [len(utilities)])
write_npy("utilities_2d.npy", "d", utilities, [4, len(utilities) // 4])
write_npy("utilities_fortran.npy", "d", utilities, [4, len(utilities) // 4], fortran_order=True)
counts = [int(value) for value in text_values("counts.txt")]
write_npy("counts_i4.npy", "i", counts, [len(counts)])
write_npy("counts_i8.npy", "q", counts, [len(counts)])
rows = text_values("rows_3x4.txt")
write_npy("rows_3x4.npy", "d", rows, [3, 4])
(HERE / "negative_bids.f64").write_bytes(struct.pack("<3d", 1.0, 2.0, -0.5))
(HERE / "odd_size.f32").write_bytes(b"\x00\x00\x80\x3f\x00")
svt_close = text_values("svt_close.txt")
write_npy("svt_close_f4.npy", "f", svt_close, [len(svt_close)])
(HERE / "svt_nan.f64").write_bytes(struct.pack("<3d", 1.0, -2.0, float("nan")))

# Inputs as people have them (inputs.cmake): text with a UTF-8 byte-order mark, CRLF line ends
# or '+' signs; upper-case extensions; a .npy under another name; binary bytes given as text; a
# 2-D array of query answers. (Upper-case names differ from the lower-case ones by more than
# case, for case-insensitive file systems.)
utilities_text = (HERE / "utilities.txt").read_text()
(HERE / "utilities_bom.txt").write_bytes(b"\xef\xbb\xbf" + utilities_text.encode())
(HERE / "utilities_crlf.txt").write_bytes(utilities_text.replace("\n", "\r\n").encode())
(HERE / "utilities_plus.txt").write_text(
    "".join("+%r\n" % value if value >= 0 else "%r\n" % value for value in utilities))
(HERE / "plus_minus.txt").write_text("1\n+-2\n3\n")
(HERE / "euro_sign.txt").write_bytes("1\n2,5 \u20ac\n".encode())
(HERE / "upper_case.F32").write_bytes((HERE / "utilities.f32").read_bytes())
(HERE / "text_named.NPY").write_text("1\n2\n3\n4\n5\n")  # longer than a .npy preamble
(HERE / "utilities_npy.txt").write_bytes((HERE / "utilities.npy").read_bytes())
# Control and high bytes on a number line, no NUL (the NUL case is utilities.f64 read as text).
(HERE / "binary_garbage.txt").write_bytes(b"\x01\x02\x93\xff\xfe7\x1b[31m\n")
svt_queries = text_values("svt_queries.txt")
write_npy("svt_queries_2x5.npy", "d", svt_queries, [2, len(svt_queries) // 2])
# output_privacy.cmake: files of 1013 bids (the count is the marker) whose errors must not
# reveal it: 1013 float64 and 3 stray bytes; a .npy of shape (1013,) holding only 1012 values.
(HERE / "privacy_bids_odd_size.f64").write_bytes(bytes(8 * 1013 + 3))
write_npy("privacy_bids_truncated.npy", "d", [2.5] * 1012, [1013])

# dpselect quantile: 1025 values 0.5 + i/1024 (exact in float32, so every format reads the same
# values) and, outside the range -5:5 of the tests, -1000 and +inf (clipped to its ends).
spread = [0.5 + i / 1024 for i in range(1025)]
(HERE / "quantile_spread.txt").write_text(
    "# 1025 values 0.5 + i/1024, i = 0..1024, then -1000 and inf (outside -5:5: clipped)\n" +
    "".join("%r\n" % value for value in spread) + "-1000\ninf\n")
spread_all = spread + [-1000.0, float("inf")]
(HERE / "quantile_spread.f32").write_bytes(struct.pack("<%df" % len(spread_all), *spread_all))
write_npy("quantile_spread_f4.npy", "f", spread_all, [len(spread_all)])

# dpselect keys: "cats" and "dogs, big" (a quoted field) held by 300 users each, released for
# certain by every strategy at --epsilon 1 --delta 1e-6 (truncated-geometric: from 28 users on);
# "lonely" held by one user, released with probability 1e-6 (never at the tests' seeds). Users
# 1..300 hold two keys each, so --max-partitions 1 keeps one of them.
queries = ["user,key,weight"]
for user in range(1, 301):
    queries += ["%d,cats,1" % user, '%d,"dogs, big",2' % user]
queries.append("301,lonely,3")
(HERE / "keys_queries.csv").write_text("\n".join(queries) + "\n")
# The same pairs with a byte-order mark, CRLF line ends, blank lines and other column names.
crlf = ["\ufeffvisitor,query"] + [line.rsplit(",", 1)[0] for line in queries[1:]] + [""]
(HERE / "keys_crlf.csv").write_bytes("\r\n".join(crlf).replace("\r\n1,cats", "\r\n\r\n1,cats", 1).encode("utf-8"))
# Integer pairs as a (n, 2) int64 .npy: keys -5 and 7 held by 100 users each, 9 by one.
pairs = []
for user in range(100):
    pairs += [user, -5, user, 7]
pairs += [1000, 9]
write_npy("keys_pairs_i8.npy", "q", pairs, [len(pairs) // 2, 2])
write_npy("keys_pairs_1d.npy", "q", pairs, [len(pairs)])
write_npy("keys_pairs_f8.npy", "d", [float(v) for v in pairs], [len(pairs) // 2, 2])
write_npy("keys_pairs_3_columns.npy", "q", pairs[:6], [2, 3])
(HERE / "keys_missing_column.csv").write_text("user,query\n1,cats\n")
(HERE / "keys_bad_user.csv").write_text("user,key\n1,cats\nalice@example.com,cats\n")
(HERE / "keys_ragged.csv").write_text("user,key\n1,cats\n2,cats,extra\n")
(HERE / "keys_unclosed.csv").write_text('user,key\n1,cats\n2,"dogs\n3,owls\n')
(HERE / "keys_quote_inside.csv").write_text('user,key\n1,ca"ts\n')
(HERE / "keys_after_quote.csv").write_text('user,key\n1,"cats"x\n')
(HERE / "keys_header_only.csv").write_text("user,key\n")
(HERE / "keys_duplicate_column.csv").write_text("user,key,user\n1,cats,2\n")
(HERE / "keys_bad_utf8.csv").write_bytes(b"user,key\n1,caf\xe9\n")
(HERE / "keys_integer_keys.csv").write_text("user,key\n1,10\n2,-20\n3,x\n")

# input_privacy.cmake: malformed inputs that hold the marker SECRET-MARKER-7f3a (or, where '-'
# could not reach the offending place, SECRET_MARKER_7f3a) as data. No error may quote it.
MARKER = "SECRET-MARKER-7f3a"
NAN_MARKER = "nan(SECRET_MARKER_7f3a)"  # std::from_chars reads NaN with a payload name


def write_npy_header(name, header, data=b""):
    """A .npy v1.0 whose header dict is `header` as it is (for malformed headers)."""
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    (HERE / name).write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") +
                              data)


# Text of numbers, read by --utilities, --queries, --data, --bids and --prices.
(HERE / "marker_word.txt").write_text("1\n2\n%s\n" % MARKER)
(HERE / "marker_number_then_text.txt").write_text("1\n25%s\n" % MARKER)
(HERE / "marker_cr_only.txt").write_bytes(("1\r2\r%s\r4\r" % MARKER).encode())
(HERE / "marker_comment_cr_only.txt").write_bytes(("# %s\r1\r2\r" % MARKER).encode())
(HERE / "marker_out_of_range.txt").write_text("1\n1e999 %s\n" % MARKER)
(HERE / "marker_nan.txt").write_text("1\n%s\n" % NAN_MARKER)
(HERE / "marker_control_bytes.txt").write_bytes(("1\n%s\x1b[2J\n" % MARKER).encode())
(HERE / "marker_nul.txt").write_bytes(("1\n%s\0\n" % MARKER).encode())
# Raw data of a size no element size divides (18 bytes).
(HERE / "marker_odd_size.f64").write_bytes(MARKER.encode())
(HERE / "marker_odd_size.f32").write_bytes(MARKER.encode())
# .npy headers with the marker where a dtype, a shape or a flag belongs.
values_data = struct.pack("<3d", 1.0, 2.0, 3.0)
write_npy_header("marker_npy_descr.npy", "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }" % MARKER,
                 values_data)
write_npy_header("marker_npy_shape.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (%s,), }" % MARKER,
                 values_data)
write_npy_header("marker_npy_fortran_order.npy",
                 "{'descr': '<f8', 'fortran_order': %s, 'shape': (3,), }" % MARKER, values_data)
write_npy_header("marker_npy_no_descr.npy", "{'%s': '<f8', 'fortran_order': False, 'shape': (3,), }" % MARKER,
                 values_data)
# CSV (user, key) pairs for dpselect keys.
(HERE / "marker_keys_no_header.csv").write_text("5551234,%s\n5551235,cats\n" % MARKER)
(HERE / "marker_keys_cr_only.csv").write_bytes(("user,key\r1,%s\r2,cats\r" % MARKER).encode())
(HERE / "marker_keys_bad_user.csv").write_text("user,key\n%s,cats\n" % MARKER)
(HERE / "marker_keys_integer_key.csv").write_text("user,key\n1,%s\n" % MARKER)
(HERE / "marker_keys_ragged.csv").write_text("user,key\n1,cats,%s\n" % MARKER)
(HERE / "marker_keys_quote_inside.csv").write_text('user,key\n1,%s"x\n' % MARKER)
(HERE / "marker_keys_after_quote.csv").write_text('user,key\n1,"cats"%s\n' % MARKER)
(HERE / "marker_keys_unclosed.csv").write_text('user,key\n1,"%s\n2,cats\n' % MARKER)
(HERE / "marker_keys_bad_utf8.csv").write_bytes(("user,key\n1,%s" % MARKER).encode() + b"\xe9\n")
(HERE / "marker_keys_nul.csv").write_bytes(("user,key\n1,%s\0\n" % MARKER).encode())
(HERE / "marker_keys_duplicate_column.csv").write_text("user,key,user,%s\n1,cats,2,3\n" % MARKER)
(HERE / "marker_keys_header_only.csv").write_text("user,key,%s\n" % MARKER)
write_npy_header("marker_keys_npy_descr.npy", "{'descr': '%s', 'fortran_order': False, 'shape': (1, 2), }" % MARKER,
                 struct.pack("<2q", 1, 2))
# The positive control of the marker and the escaping of released keys: held by 300 users each
# (released for certain, as in keys_queries.csv), the marker itself, a key holding ESC [ 2 J and
# a line feed (a quoted CSV field), and one holding a backslash.
hostile = ["user,key"]
for user in range(1, 301):
    hostile += ["%d,%s" % (user, MARKER), '%d,"wipe\x1b[2J\nline"' % user, "%d,back\\slash" % user]
(HERE / "marker_keys_released.csv").write_text("\n".join(hostile) + "\n")
