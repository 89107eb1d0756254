"""Evaluation harness: SWE-bench-style file localization (`swebench`), a repository's own
history replayed (`history`), on trees synced from git clones (`gittree`)."""
