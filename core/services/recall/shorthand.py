"""The shorthand of people who write software, read as the words it stands for.

An agent's note says "db migration failed in prod" and the question that should find it
asks "which database migration failed in production"; a note says "bumped the deps" and
the question asks about dependencies. They share no stem, so BM25 could not see that
they are about one thing. Each short form's stem here stands for its long word's stem,
so both meet in the index and in the question alike (a substitution, as British
spellings are: no extra term, no cost at search time).

Only shorthand whose reading is not in doubt in a developer's notes, and that chat
rarely uses for anything else: not *doc* (a doctor), *app* (a job application),
*temp* (a temperature), *sec* (a second), *min* (a minute), *req* (a requirement) or
*pg* (a page). A Snowball stem is shared by a word's family, so *prod* meets
*production* and, as *production* already does, *product*. Read through
:func:`.spellings.stem_aliases`, as the British spellings are.
"""

from __future__ import annotations

#: Short form, then the word it stands for.
PAIRS = """
admin administrator  arg argument  auth authentication  cert certificate
config configuration  creds credentials  db database  dbs databases
deps dependencies  dev development  dir directory  env environment  err error
func function  img image  impl implementation  info information  js javascript
k8s kubernetes  mgmt management  msg message  msgs messages  param parameter
passwd password  perf performance  postgresql postgres  prod production
pwd password  py python  repo repository  svc service  svcs services  tmp temporary
yml yaml
"""
