#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the code block of a Markdown document that follows the line ``<!-- test: NAME -->``.

    doc_block.py README.md hello_command

The README marks the commands that CI runs exactly as written this way (tests/CMakeLists.txt);
a missing mark or block is an error, so a renamed or deleted block fails the test that runs it.
"""

import re
import sys


def block(document: str, name: str) -> str:
    text = open(document, encoding="utf-8").read()
    match = re.search(r"^<!-- test: %s -->\n```[a-z]*\n(.*?)^```[ ]*$" % re.escape(name), text, re.S | re.M)
    if not match:
        sys.exit(f"doc_block.py: {document} has no code block marked <!-- test: {name} -->")
    return match.group(1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: doc_block.py DOCUMENT NAME")
    sys.stdout.write(block(sys.argv[1], sys.argv[2]))
