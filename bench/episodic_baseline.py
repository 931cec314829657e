"""The baseline process: load an agent_memory.json with json and format its context.

This is what an agent using the episodic training-memory library pays per
step; ``bench_store.py`` runs it next to ``memwork context`` in the same run.
Usage: python bench/episodic_baseline.py FILE TASK
"""

from __future__ import annotations

import json
import sys

from episodic_reference import render

with open(sys.argv[1]) as handle:
    memory = json.load(handle)
sys.stdout.write(render(memory, sys.argv[2]) + "\n")
