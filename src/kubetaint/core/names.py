"""Generated object names (mirrors apiserver/pkg/storage/names SimpleNameGenerator and
apimachinery util/rand's alphabet): `generateName` trimmed to leave room, plus 5 random characters
drawn from an alphabet without vowels or easily confused characters."""

from __future__ import annotations

import random

#: util/rand's alphanumerics: no vowels (no accidental words), no 0/1/3 (confusable).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
MAX_NAME_LENGTH = 63
RANDOM_LENGTH = 5


def generate_name(base: str, rng: random.Random) -> str:
    """SimpleNameGenerator.GenerateName: `base` cut to 58 characters + 5 random ones from `rng`."""
    base = base[: MAX_NAME_LENGTH - RANDOM_LENGTH]
    return base + "".join(rng.choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))
