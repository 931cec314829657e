"""The operations: one declaration per operation, the runner every door calls, and the
Python API generated from them.
"""
