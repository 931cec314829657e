"""The ground floor: errors, the clock, ids, text, settings read from the environment, JSON and
small helpers every other layer may use. Imports nothing else of memwork.
"""
