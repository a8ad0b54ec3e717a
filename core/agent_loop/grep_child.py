"""The search of bounded_grep.py, run in a child process it kills after a time limit
(Python's `re` backtracks). Reads one JSON job on stdin, writes the hits as JSON on stdout.

Job: {"pattern": str, "files": [[name, path], ...], "limit": int, "width": int,
"ignore_case": bool}.
Reply: {"hits": [[name, line number, line cut to width], ...], "more": bool}.
"""

import json
import re
import sys


def main() -> None:
    job = json.load(sys.stdin)
    regex = re.compile(job["pattern"], re.IGNORECASE if job.get("ignore_case") else 0)
    hits = []
    for name, path in job["files"]:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            if regex.search(line):
                if len(hits) == job["limit"]:
                    json.dump({"hits": hits, "more": True}, sys.stdout)
                    return
                hits.append([name, number, line[: job["width"]]])
    json.dump({"hits": hits, "more": False}, sys.stdout)


if __name__ == "__main__":
    main()
