"""Distilling memory with a language model, when one is configured.

``consolidate`` (recent episodes into ``[CONSOLIDATED]`` rules), ``reflect`` (a
session's observations into lessons) and ``crystallize`` (a session's summary) ask an
OpenAI-compatible chat-completions endpoint named in the environment
(:mod:`.endpoint`); without one they use plain heuristics and say so. The prompts and
the reading of answers are plain functions (:mod:`.prompts`), the HTTP call is one
small module (:mod:`.client`), and what a model writes passes the review queue like
any agent's write.
"""
