# SPDX-License-Identifier: Apache-2.0
"""(user, key) pairs from a public data set: the words of Debian's package descriptions.

    python bench/debian_pairs.py [--write pairs.tsv]

The source is the output of ``apt-cache dumpavail`` on this machine: one stanza per package of the
configured apt lists (``apt-get update``, run as root, fills them; this script never runs it).

- A *user* is a package: a stanza's ``Package:`` field. A name met again in a later stanza (another
  version or architecture) is kept once, as its first stanza; the later ones are dropped and
  counted.
- Its *keys* are the distinct words of its ``Description:`` field: the text after
  ``Description:`` on that line plus the continuation lines that follow it (lines starting with a
  space; one that is just " ." is a paragraph break and adds no word). No other field contributes
  (``Description-md5:`` is another field).
- A *word* is a maximal run of ``[a-z0-9]`` in the lower-cased text (one compiled regex): every
  other character, punctuation and non-ASCII letters included, separates words; "GTK+ 3.0" gives
  "gtk", "3" and "0".

The pairs are distinct (user, key) pairs, in stanza order and, within a package, in the order its
words first appear. Note: apt's Packages indices carry only each package's one-line synopsis (the
long descriptions are in the Translation-en files, which apt fetches only when
``Acquire::Languages`` allows, and which ``dumpavail`` does not print), so on most machines each
user holds the few words of one line.

``debian_pairs()`` returns the two columns as lists of str, ``debian_codes()`` the same pairs as
int64 codes (``numpy.unique(..., return_inverse=True)``) with the names the codes index, and
``--write PATH`` writes them as a TSV (a header comment with the source and the counts, a
``user<TAB>key`` line, then one pair a line). The counts are printed either way. The data itself
is not committed: it is whatever the machine's apt lists hold.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import re
import subprocess

import numpy as np

WORD = re.compile(r"[a-z0-9]+")


def dumpavail() -> str:
    """The text of ``apt-cache dumpavail``. Raises RuntimeError when apt-cache fails or prints
    nothing (empty apt lists)."""
    try:
        done = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, check=False)
    except FileNotFoundError as error:
        raise RuntimeError("apt-cache not found: this data set needs a Debian or Ubuntu machine") from error
    if done.returncode != 0:
        raise RuntimeError(f"apt-cache dumpavail failed ({done.returncode}): "
                           f"{done.stderr.decode(errors='replace').strip()}")
    if not done.stdout.strip():
        raise RuntimeError("apt-cache dumpavail printed nothing: the apt lists are empty; "
                           "`apt-get update` (as root) fills them")
    return done.stdout.decode("utf-8", errors="replace")


def parse(text: str) -> tuple[list[str], list[str], int]:
    """The distinct (user, key) pairs of dumpavail's text, as two columns, and the number of
    stanzas dropped because their package name came earlier."""
    users: list[str] = []
    keys: list[str] = []
    seen: set[str] = set()
    dropped = 0

    def flush(package: str | None, lines: list[str]) -> None:
        nonlocal dropped
        if package is None:
            return
        if package in seen:
            dropped += 1
            return
        seen.add(package)
        words = dict.fromkeys(WORD.findall(" ".join(lines).lower()))  # distinct, first-seen order
        users.extend([package] * len(words))
        keys.extend(words)

    package: str | None = None
    description: list[str] = []
    in_description = False
    for line in text.splitlines():
        if not line.strip():  # a blank line ends the stanza
            flush(package, description)
            package, description, in_description = None, [], False
        elif line.startswith((" ", "\t")):  # a continuation of the current field
            if in_description and line.strip() != ".":
                description.append(line)
        else:
            in_description = line.startswith("Description:")
            if in_description:
                description.append(line[len("Description:"):])
            elif line.startswith("Package:"):
                package = line[len("Package:"):].strip()
    flush(package, description)
    return users, keys, dropped


def source_note(text: str) -> str:
    """Where the stanzas came from: the command, the suites and dates of the apt lists, and the
    SHA-256 of dumpavail's output (so that another run can tell whether it has the same data)."""
    suites = []
    for path in sorted(glob.glob("/var/lib/apt/lists/*InRelease")):
        fields = {}
        with open(path, errors="replace") as release:
            for line in release:
                if line.startswith(("Origin:", "Suite:", "Codename:", "Date:")):
                    name, _, value = line.partition(":")
                    fields.setdefault(name, value.strip())
        suites.append(f"{fields.get('Origin', '?')} {fields.get('Codename', '?')} "
                      f"({fields.get('Suite', '?')}, {fields.get('Date', '?')})")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"apt-cache dumpavail; lists: {'; '.join(suites) or 'unknown'}; sha256 {digest}"


def debian_pairs(text: str | None = None) -> tuple[list[str], list[str]]:
    """The (user, key) pairs: users[i] is a package name, keys[i] one word of its description.
    Reads ``apt-cache dumpavail`` unless text is given."""
    users, keys, _ = parse(dumpavail() if text is None else text)
    return users, keys


def debian_codes(text: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The same pairs as int64 codes: (user_codes, key_codes, user_names, key_names), where
    user_names[user_codes[i]] == users[i] (names sorted, codes dense from 0)."""
    users, keys = debian_pairs(text)
    user_names, user_codes = np.unique(np.asarray(users), return_inverse=True)
    key_names, key_codes = np.unique(np.asarray(keys), return_inverse=True)
    return user_codes.astype(np.int64), key_codes.astype(np.int64), user_names, key_names


def counts(users: list[str], keys: list[str]) -> dict:
    """The number of pairs, users and distinct keys."""
    return {"pairs": len(users), "users": len(set(users)), "keys": len(set(keys))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", metavar="PATH", help="write the pairs here as a TSV")
    args = parser.parse_args()

    text = dumpavail()
    users, keys, dropped = parse(text)
    found = counts(users, keys)
    source = source_note(text)
    print(f"source: {source}")
    print(f"{found['users']} packages (users), {found['pairs']} pairs, {found['keys']} distinct keys (words); "
          f"{dropped} later stanzas of a name already seen dropped")
    if args.write:
        with open(args.write, "w", encoding="utf-8") as out:
            out.write(f"# source: {source}\n")
            out.write("# users: packages (first stanza of each name); keys: distinct [a-z0-9]+ words of the "
                      "lower-cased Description\n")
            out.write(f"# pairs: {found['pairs']}, users: {found['users']}, distinct keys: {found['keys']}\n")
            out.write("user\tkey\n")
            out.writelines(f"{user}\t{key}\n" for user, key in zip(users, keys))
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
