"""Deterministic synthetic text for the programs (no download): a Zipf-distributed word
stream with a first-order Markov flavour, and characters drawn from it."""
import numpy as np

_SYLLABLES = ["ka", "lo", "mi", "ren", "ta", "so", "vi", "an", "el", "du", "ra", "ne", "po",
              "sh", "ti", "ma", "or", "ba", "ly", "qu"]


def words(n_tokens, vocab, seed=0):
    """``n_tokens`` word strings over a ``vocab``-word lexicon, Zipf-distributed."""
    g = np.random.default_rng(seed)
    lexicon = ["".join(g.choice(_SYLLABLES, size=g.integers(1, 4))) + str(i % 7)
               for i in range(vocab)]
    ranks = np.minimum(g.zipf(1.3, size=n_tokens) - 1, vocab - 1)
    shift = np.cumsum(g.integers(0, 3, size=n_tokens)) % vocab     # neighbours correlate
    return [lexicon[i] for i in (ranks + shift) % vocab]


def text(n_chars, seed=0):
    """About ``n_chars`` characters of sentences built from ``words``."""
    out, size = [], 0
    for i, w in enumerate(words(n_chars // 4 + 1, 2000, seed)):
        piece = w + (".\n" if i % 11 == 10 else " ")
        out.append(piece)
        size += len(piece)
        if size >= n_chars:
            break
    return "".join(out)
