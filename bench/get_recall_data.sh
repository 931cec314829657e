#!/bin/sh
# Put the public recall sets where bench/bench_recall.py reads them:
# $MEMWORK_RECALL_DATA (default bench/data/recall, git-ignored). No data is committed.
#
#   file (under $MEMWORK_RECALL_DATA)   from                                          licence
#   locomo10.json                       github.com/snap-research/LoCoMo  data/locomo10.json   CC BY-NC 4.0
#   realtalk/Chat_*.json                github.com/danny911kr/REALTALK   data/Chat_*.json     none stated
#   longmemeval_s_cleaned.json          huggingface.co/datasets/xiaowu0162/longmemeval-cleaned  MIT
#     (or longmemeval_s.json / longmemeval_oracle.json from the same place; the code and
#      the data format are at github.com/xiaowu0162/LongMemEval)
#
# With git copies of the two GitHub repositories at hand (a clone or a bare mirror):
#
#   bench/get_recall_data.sh --locomo PATH/TO/LoCoMo --realtalk PATH/TO/REALTALK
#
# copies each file from the repository's HEAD with `git show`. Without them it
# downloads the same files from GitHub with curl. LongMemEval lives on HuggingFace
# only: download longmemeval_s_cleaned.json (about 270 MB) by hand, e.g.
#
#   curl -L -o "$MEMWORK_RECALL_DATA/longmemeval_s_cleaned.json" \
#     https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json
#
# HuggingFace out of reach, a public GitHub repository carries LongMemEval_S too, one
# question per file: github.com/hussainzs/Memoria, evaluations/data/lme_jsons/ (the
# same MIT data; beside it, each question's oracle file). With a git copy of it:
#
#   bench/get_recall_data.sh --longmemeval-from PATH/TO/Memoria
#
# puts the questions whose files hold a whole haystack (sessions other than the
# evidence) into longmemeval_s.json, one per question id. The copy used for
# docs/RECALL.md held 498 of the 500 questions.
#
# Two smaller sets of other shapes (the sets memdaily, madial and madial-zh):
#
#   memdaily/NN_*.json                  github.com/nuster1128/MemSim  data_generation/final_dataset/messages_and_QAs/   none stated
#   madial/MADial-Bench-*.json          github.com/hejunqing/MADial-Bench  data/en/ and data/ch/                     none stated
#
#   bench/get_recall_data.sh --memsim PATH/TO/MemSim --madial PATH/TO/MADial-Bench
#
# (without those options, downloaded from GitHub with curl as well).
#
# A set whose files are missing is skipped by the benchmark with a note.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
out=${MEMWORK_RECALL_DATA:-$here/bench/data/recall}
locomo=""
realtalk=""
lme=""
memsim=""
madial=""
while [ $# -gt 0 ]; do
    case $1 in
        --locomo) locomo=$2; shift 2 ;;
        --realtalk) realtalk=$2; shift 2 ;;
        --longmemeval-from) lme=$2; shift 2 ;;
        --memsim) memsim=$2; shift 2 ;;
        --madial) madial=$2; shift 2 ;;
        *) echo "usage: $0 [--locomo GIT_DIR] [--realtalk GIT_DIR] [--longmemeval-from GIT_DIR]" \
               "[--memsim GIT_DIR] [--madial GIT_DIR]" >&2
           exit 2 ;;
    esac
done
mkdir -p "$out/realtalk" "$out/memdaily" "$out/madial"

# git -C works on a work tree, --git-dir on a bare mirror: accept either.
gitdir() { if [ -d "$1/.git" ]; then echo "$1/.git"; else echo "$1"; fi; }

if [ -n "$locomo" ]; then
    git --git-dir="$(gitdir "$locomo")" show HEAD:data/locomo10.json > "$out/locomo10.json"
else
    curl -fsSL -o "$out/locomo10.json" \
        https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json
fi
echo "locomo10.json -> $out/"

if [ -n "$realtalk" ]; then
    g=$(gitdir "$realtalk")
    for f in $(git --git-dir="$g" ls-tree --name-only HEAD data/ | grep '^data/Chat_.*\.json$'); do
        git --git-dir="$g" show "HEAD:$f" > "$out/realtalk/$(basename "$f")"
    done
else
    for n in 1_Emi_Elise 2_Kevin_Elise 3_Kevin_Paola 4_Emi_Paola 5_Nicolas_Nebraas \
        6_Vanessa_Nicolas 7_Nebraas_Vanessa 8_Akib_Muhhamed 9_Fahim_Akib 10_Fahim_Muhhamed; do
        curl -fsSL -o "$out/realtalk/Chat_$n.json" \
            "https://raw.githubusercontent.com/danny911kr/REALTALK/main/data/Chat_$n.json"
    done
fi
echo "realtalk/Chat_*.json -> $out/realtalk/"

if [ -n "$lme" ]; then
    # Each file is read from the repository's HEAD; a file of more than 1 MB is a
    # LongMemEval_M haystack (500 sessions), not an S one, and is left out.
    python3 - "$(gitdir "$lme")" "$out/longmemeval_s.json" <<'PY'
import json, subprocess, sys

git, target = sys.argv[1], sys.argv[2]
folder = "evaluations/data/lme_jsons/"
listing = subprocess.run(
    ["git", "--git-dir", git, "ls-tree", "-l", "HEAD", folder],
    check=True, capture_output=True, text=True,
).stdout
kept = {}
for row in listing.splitlines():
    meta, path = row.split("\t", 1)
    _mode, _kind, blob, size = meta.split()
    if not path.endswith(".json") or not size.isdigit() or int(size) > 1_000_000:
        continue
    shown = subprocess.run(["git", "--git-dir", git, "cat-file", "blob", blob], capture_output=True)
    if shown.returncode:  # a blob the copy lacks
        continue
    item = json.loads(shown.stdout)
    ids = [str(i) for i in item.get("haystack_session_ids") or []]
    if all(i.startswith("answer_") for i in ids):
        continue  # an oracle file: the evidence sessions alone
    qid = str(item["question_id"])
    if qid not in kept or len(ids) > len(kept[qid]["haystack_session_ids"]):
        kept[qid] = item
with open(target, "w") as out:
    json.dump([kept[q] for q in sorted(kept)], out)
print(f"{len(kept)} LongMemEval_S questions -> {target}")
PY
fi

if ls "$out"/longmemeval_*.json > /dev/null 2>&1; then
    echo "LongMemEval: found $(cd "$out" && ls longmemeval_*.json | tr '\n' ' ')"
else
    echo "LongMemEval: not present; download it by hand (see the top of this script)"
fi

memdaily_dir=data_generation/final_dataset/messages_and_QAs
memdaily_files="01_simple_events 01_simple_hybrid 01_simple_items 01_simple_places 01_simple_roles
02_conditional_events 02_conditional_hybrid 02_conditional_items 02_conditional_places
02_conditional_roles 03_comparative_events 03_comparative_hybrid 03_comparative_roles
04_aggregative_events 04_aggregative_hybrid 04_aggregative_roles 05_post_processing_events
05_post_processing_hybrid 05_post_processing_items 05_post_processing_places
05_post_processing_roles 06_noisy_events 06_noisy_hybrid 06_noisy_items 06_noisy_places
06_noisy_roles"
for f in $memdaily_files; do
    if [ -n "$memsim" ]; then
        git --git-dir="$(gitdir "$memsim")" show "HEAD:$memdaily_dir/$f.json" > "$out/memdaily/$f.json"
    else
        curl -fsSL -o "$out/memdaily/$f.json" \
            "https://raw.githubusercontent.com/nuster1128/MemSim/main/$memdaily_dir/$f.json"
    fi
done
echo "memdaily/NN_*.json -> $out/memdaily/"

for f in en/MADial-Bench-en-memory en/MADial-Bench-en-dialogue ch/MADial-Bench-zh-memory \
    ch/MADial-Bench-zh-dialogue; do
    if [ -n "$madial" ]; then
        git --git-dir="$(gitdir "$madial")" show "HEAD:data/$f.json" > "$out/madial/$(basename "$f").json"
    else
        curl -fsSL -o "$out/madial/$(basename "$f").json" \
            "https://raw.githubusercontent.com/hejunqing/MADial-Bench/main/data/$f.json"
    fi
done
echo "madial/MADial-Bench-*.json -> $out/madial/"
