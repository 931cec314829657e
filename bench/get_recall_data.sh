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
# A set whose files are missing is skipped by the benchmark with a note.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
out=${MEMWORK_RECALL_DATA:-$here/bench/data/recall}
locomo=""
realtalk=""
while [ $# -gt 0 ]; do
    case $1 in
        --locomo) locomo=$2; shift 2 ;;
        --realtalk) realtalk=$2; shift 2 ;;
        *) echo "usage: $0 [--locomo GIT_DIR] [--realtalk GIT_DIR]" >&2; exit 2 ;;
    esac
done
mkdir -p "$out/realtalk"

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

if ls "$out"/longmemeval_*.json > /dev/null 2>&1; then
    echo "LongMemEval: found $(cd "$out" && ls longmemeval_*.json | tr '\n' ' ')"
else
    echo "LongMemEval: not present; download it by hand (see the top of this script)"
fi
