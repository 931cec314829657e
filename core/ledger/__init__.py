"""The ledger: what every record shares and every change leaves behind: the audit log,
links between records, the store's configuration, per-agent isolation and the curator key.
"""
