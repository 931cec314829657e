set -e
# Made the schema-2 fixture with the code of commit 20c8aa3: bash make_store.sh STORE (see README.md).
M=".venv/bin/python -m memwork"
DB="$1"
export MEMWORK_NOW=2026-11-01T12:00:00Z MEMWORK_FSYNC=0 MEMWORK_AGENT=fixture
echo '{"task_id": "deploy-api", "score": 0.3, "steps": 9, "summary": "Rolled back after the canary failed", "mistakes": ["Skipped the canary stage"], "mistake_cards": [{"mistake_type": "no_canary", "correct_decision": "canary", "lesson": "Canary first"}, {"mistake_type": "rushed", "correct_decision": "wait", "lesson": "Wait for health"}]}' | $M --db "$DB" record-episode
echo '{"task_id": "deploy-api", "score": 0.2, "steps": 4, "summary": "Skipped canary again", "mistakes": ["Skipped the canary stage"], "mistake_cards": [{"mistake_type": "no_canary", "correct_decision": "canary", "lesson": "Canary first, always"}]}' | $M --db "$DB" record-episode
echo '{"task_id": "deploy-api", "score": 0.95, "steps": 6, "summary": "Clean deploy with canary", "successes": ["Canaried for fifteen minutes"]}' | $M --db "$DB" record-episode
$M --db "$DB" lesson add "Canary every deploy for fifteen minutes" --scope task:deploy-api
$M --db "$DB" lesson add "Canary every deploy for fifteen minutes at least" --scope task:deploy-api --on-duplicate supersede
$M --db "$DB" lesson add "Read the runbook before paging"
A=$($M --db "$DB" lesson add "Rotate keys monthly")
B=$($M --db "$DB" lesson add "Rotate the keys every month" --on-duplicate keep-both)
$M --db "$DB" lesson merge $A $B
C1=$($M --db "$DB" --json card list | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
C2=$($M --db "$DB" --json card list | python3 -c 'import json,sys; print(json.load(sys.stdin)[1]["id"])')
$M --db "$DB" card merge $C1 $C2
S=$($M --db "$DB" session start --project api --title "canary rollout")
$M --db "$DB" observe --session $S "checked the canary"
$M --db "$DB" session end $S --summary "Rolled out with a canary"
$M --db "$DB" slot set persona "Be terse."
$M --db "$DB" checkpoint create -m "schema 2"
printf '%s\n' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 0 failed", "mistakes": ["Forgot step 0 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 1 failed", "mistakes": ["Forgot step 1 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 2 failed", "mistakes": ["Forgot step 2 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 3 failed", "mistakes": ["Forgot step 3 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 4 failed", "mistakes": ["Forgot step 4 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 5 failed", "mistakes": ["Forgot step 5 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 6 failed", "mistakes": ["Forgot step 6 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 7 failed", "mistakes": ["Forgot step 7 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 8 failed", "mistakes": ["Forgot step 8 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 9 failed", "mistakes": ["Forgot step 9 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 10 failed", "mistakes": ["Forgot step 10 of the runbook"]}' '{"task_id": "migrate-db", "score": 0.2, "steps": 3, "summary": "Migration attempt 11 failed", "mistakes": ["Forgot step 11 of the runbook"]}' | $M --db "$DB" record-episode
