"""How often the Rules language answers as the real engine does, on mutated corpus expressions.

Prints the share of seeded mutations (a token cut, inserted or replaced, one to three
times, in the corpus's valid expressions) whose validity and error text equal
``octorules-wirefilter``'s (Cloudflare's wirefilter), then the commonest differences
with one example each (``docs-fn``: an expression using a function where the
documentation wins over the engine, by design).

Run: ``.venv/bin/python tests/rules_language/engine_survey.py --inputs 10000 --seed 1``
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import test_fuzz  # noqa: E402 - the corpus seeds and tokens

from workbench.rules_language import ExpressionError, compile_expression  # noqa: E402

TOKENS = [*test_fuzz.TOKENS, " ", "(", ")", ",", '"', "{", "}", "[", "]", "*", " and ", "!"]
DOCS_FUNCTIONS = ("len(", "url_decode(", "lookup_json", "cidr(", "is_timed_hmac", "split(")


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, len(text))
        j = min(len(text), i + rng.randint(0, 6))
        cut = rng.random()
        if cut < 0.35:
            text = text[:i] + text[j:]
        elif cut < 0.75:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        else:
            text = text[:i] + rng.choice(TOKENS) + text[j:]
    return text


def ours(text: str) -> str | None:
    try:
        compile_expression(text)
    except ExpressionError as err:
        return str(err)
    return None


def reason(error: str | None) -> str:
    return "accepted" if error is None else error.rstrip("\n").split("\n")[-1].lstrip(" ^")[:60]


def main() -> None:
    import octorules_wirefilter  # only the survey needs it; test_engine_texts imports mutate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    same = 0
    differ: Counter[tuple[str, str, str]] = Counter()
    example: dict[tuple[str, str, str], str] = {}
    for _ in range(args.inputs):
        text = mutate(rng, rng.choice(test_fuzz.SEEDS))
        real, mine = octorules_wirefilter.parse_expression(text).get("error"), ours(text)
        if real == mine:
            same += 1
            continue
        kind = "docs-fn" if any(f in text for f in DOCS_FUNCTIONS) else "text"
        key = (kind, reason(real), reason(mine))
        differ[key] += 1
        example.setdefault(key, text)
    print(f"{same:,} of {args.inputs:,} as the engine ({same / args.inputs:.1%})")
    for key, count in differ.most_common(15):
        print(f"{count:5}  {key[0]:7}  engine: {key[1]!r}  here: {key[2]!r}")
        print(f"       e.g. {example[key]!r}"[:160])


if __name__ == "__main__":
    main()
