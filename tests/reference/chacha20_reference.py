#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Independent pure-Python ChaCha20 (RFC 8439 section 2.3) used to confirm the vectors typed
in tests/chacha20_test.cpp: those from RFC 8439 (section 2.3.2 as bytes and as words, section
2.4.2, Appendix A.1) and the SplitMix64 expansion behind ChaChaKey::from_seed. Exits non-zero
on a mismatch. Run: python3 tests/reference/chacha20_reference.py
"""
import struct

MASK = 0xFFFFFFFF


def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & MASK


def quarter_round(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 7)


def block(key: bytes, counter: int, nonce: bytes) -> bytes:
    assert len(key) == 32 and len(nonce) == 12 and 0 <= counter <= MASK
    state = list(struct.unpack("<4I", b"expand 32-byte k"))
    state += list(struct.unpack("<8I", key)) + [counter] + list(struct.unpack("<3I", nonce))
    working = state[:]
    for _ in range(10):
        quarter_round(working, 0, 4, 8, 12)
        quarter_round(working, 1, 5, 9, 13)
        quarter_round(working, 2, 6, 10, 14)
        quarter_round(working, 3, 7, 11, 15)
        quarter_round(working, 0, 5, 10, 15)
        quarter_round(working, 1, 6, 11, 12)
        quarter_round(working, 2, 7, 8, 13)
        quarter_round(working, 3, 4, 9, 14)
    return struct.pack("<16I", *[(w + s) & MASK for w, s in zip(working, state)])


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", " "))


# The vectors exactly as typed in tests/chacha20_test.cpp.
KEY_0_TO_1F = bytes(range(32))
TYPED = [
    ("RFC 8439 2.3.2", KEY_0_TO_1F, 1, h("000000090000004a00000000"),
     h("10f1e7e4d13b5915500fdd1fa32071c4 c7d1f4c733c068030422aa9ac3d46c4e"
       "d2826446079faa0914c2d705d98b02a2 b5129cd1de164eb9cbd083e8a2503c4e")),
    ("RFC 8439 A.1 #1", bytes(32), 0, bytes(12),
     h("76b8e0ada0f13d90405d6ae55386bd28 bdd219b8a08ded1aa836efcc8b770dc7"
       "da41597c5157488d7724e03fb8d84a37 6a43b8f41518a11cc387b669b2ee6586")),
    ("RFC 8439 A.1 #2", bytes(32), 1, bytes(12),
     h("9f07e7be5551387a98ba977c732d080d cb0f29a048e3656912c6533e32ee7aed"
       "29b721769ce64e43d57133b074d839d5 31ed1f28510afb45ace10a1f4b794d6f")),
    ("RFC 8439 A.1 #3", bytes(31) + b"\x01", 1, bytes(12),
     h("3aeb5224ecf849929b9d828db1ced4dd 832025e8018b8160b82284f3c949aa5a"
       "8eca00bbb4a73bdad192b5c42f73f2fd 4e273644c8b36125a64addeb006c13a0")),
    ("RFC 8439 A.1 #4", b"\x00\xff" + bytes(30), 2, bytes(12),
     h("72d54dfbf12ec44b362692df94137f32 8fea8da73990265ec1bbbea1ae9af0ca"
       "13b25aa26cb4a648cb9b9d1be65b2c09 24a66c54d545ec1b7374f4872e99f096")),
]

# RFC 8439 2.4.2: the first 64 bytes of plaintext and ciphertext (counter 1).
PLAINTEXT_2_4_2 = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one "
                   b"tip for the future, sunscreen would be it.")
CIPHERTEXT_2_4_2_FIRST_64 = h(
    "6e2e359a2568f98041ba0728dd0d6981 e97e7aec1d4360c20a27afccfd9fae0b"
    "f91b65c5524733ab8f593dabcd62b357 1639d624e65152ab8f530c359f0861d8")


# RFC 8439 2.3.2 printed as the state words after the final addition.
WORDS_2_3_2 = [0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
               0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
               0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2]

# ChaChaKey::from_seed(0) as typed in the test.
FROM_SEED_0 = [0x7b1dcdaf, 0xe220a839, 0xa1b965f4, 0x6e789e6a,
               0x8009454f, 0x06c45d18, 0x724c81ec, 0xf88bb8a8]


def splitmix64_key_words(seed):
    mask64 = (1 << 64) - 1
    words = []
    for _ in range(4):
        seed = (seed + 0x9E3779B97F4A7C15) & mask64
        z = seed
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask64
        z ^= z >> 31
        words += [z & MASK, z >> 32]
    return words


def main():
    failures = 0
    words = list(struct.unpack("<16I", block(KEY_0_TO_1F, 1, h("000000090000004a00000000"))))
    ok = words == WORDS_2_3_2
    failures += not ok
    print(f"RFC 8439 2.3.2 words: {'ok' if ok else 'MISMATCH'}")
    ok = splitmix64_key_words(0) == FROM_SEED_0
    failures += not ok
    print(f"from_seed(0): {'ok' if ok else 'MISMATCH'}")
    for name, key, counter, nonce, expected in TYPED:
        ok = block(key, counter, nonce) == expected
        failures += not ok
        print(f"{name}: {'ok' if ok else 'MISMATCH'}")
    keystream = block(KEY_0_TO_1F, 1, h("000000000000004a00000000"))
    ok = bytes(p ^ k for p, k in zip(PLAINTEXT_2_4_2[:64], keystream)) == CIPHERTEXT_2_4_2_FIRST_64
    failures += not ok
    print(f"RFC 8439 2.4.2 first block: {'ok' if ok else 'MISMATCH'}")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
