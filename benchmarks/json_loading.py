"""Streaming JSON input: the ijson reader against the earlier hand-written ``raw_decode`` scanner.

Writes a synthetic OpinioBank JSON array (400 entities x 500 reviews, about 100 MB) into a
temporary folder and times, best of three: the raw JSON values only (``ijson.items`` vs a
``json.JSONDecoder.raw_decode`` scanner over 1 MiB chunks, the scanner the loader used
before), and the whole :func:`opinio_agents.io.iter_entities` (decode, parse, validate).

Usage:
    python benchmarks/json_loading.py [--old-loader PATH/TO/old_loaders.py]

``--old-loader`` times a copy of the previous ``opinio_agents/io/loaders.py`` end to end too
(``git show 3ce20d4:opinio_agents/io/loaders.py > /tmp/old_loaders.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import ijson

from opinio_agents.io import iter_entities

WORDS = "room staff breakfast wifi pool noisy clean friendly slow great terrible location".split()


def write_dataset(path: Path, entities: int = 400, reviews: int = 500) -> None:
    rng = random.Random(0)
    with open(path, "w", encoding="utf-8") as out:
        out.write("[\n")
        for e in range(entities):
            record = {
                "entity_id": e,
                "entity_name": f"Hotel {e}",
                "user_reviews": [
                    {
                        "review_id": r,
                        "text": " ".join(rng.choice(WORDS) for _ in range(60)),
                        "rating": rng.randint(1, 5),
                        "helpful_votes": rng.randint(0, 9),
                        "publication_date": "2020-01-02",
                    }
                    for r in range(reviews)
                ],
            }
            out.write(("," if e else "") + json.dumps(record) + "\n")
        out.write("]\n")


def raw_decode_values(path: Path, chunk: int = 1 << 20) -> int:
    """Top-level array elements with json.JSONDecoder.raw_decode over a growing chunk buffer."""
    decoder = json.JSONDecoder()
    count, buf, pos = 0, "", 0
    with open(path, encoding="utf-8") as f:
        buf = f.read(chunk)
        pos = buf.index("[") + 1
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n,":
                pos += 1
            if pos < len(buf) and buf[pos] == "]":
                return count
            try:
                _, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError:
                more = f.read(max(chunk, len(buf) - pos))
                if not more:
                    raise
                buf, pos = buf[pos:] + more, 0
                continue
            count, pos = count + 1, end


def ijson_values(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in ijson.items(f, "item", use_float=True))


def best(fn: Callable[[], int], repeat: int = 3) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-loader", type=Path, help="a copy of the previous io/loaders.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.json"
        write_dataset(path)
        print(f"file: {path.stat().st_size / 1e6:.0f} MB, 400 entities x 500 reviews, ijson backend {ijson.backend}")
        rows = [
            ("raw values: json raw_decode scanner", lambda: raw_decode_values(path)),
            ("raw values: ijson.items", lambda: ijson_values(path)),
            ("iter_entities (ijson reader, validated)", lambda: sum(1 for _ in iter_entities(path))),
        ]
        if args.old_loader:
            spec = importlib.util.spec_from_file_location("old_loaders", args.old_loader)
            assert spec is not None and spec.loader is not None
            old = importlib.util.module_from_spec(spec)
            sys.modules["old_loaders"] = old
            spec.loader.exec_module(old)
            rows.append(
                ("iter_entities (previous hand-written loader)", lambda: sum(1 for _ in old.iter_entities(path)))
            )
        print("| what | best of 3, s |\n|---|---|")
        for name, fn in rows:
            seconds, count = best(fn)
            print(f"| {name} ({count} entities) | {seconds:.2f} |")


if __name__ == "__main__":
    main()
