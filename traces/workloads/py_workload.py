"""The Python capture's script: a small text-processing job on a real document.

Reads a text file, counts word frequencies, builds an inverted index of line numbers, round-trips
the index through JSON, and sorts words by frequency and length.
"""

import collections
import json
import re
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
lines = text.splitlines()
words = re.findall(r"[A-Za-z']+", text.lower())
freq = collections.Counter(words)
index: dict[str, list[int]] = collections.defaultdict(list)
for no, line in enumerate(lines):
    for w in set(re.findall(r"[A-Za-z']+", line.lower())):
        index[w].append(no)
blob = json.dumps(index, sort_keys=True)
back = json.loads(blob)
assert back.keys() == index.keys()
ranked = sorted(freq.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
print(len(words), len(freq), len(blob), ranked[:10])
