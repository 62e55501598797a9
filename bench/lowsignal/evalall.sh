#!/usr/bin/env bash
# evalall.sh DATASET TARGET EXCL FILES...: evaluate.py each, print JSON lines prefixed by file
TOP=$(cd "$(dirname "$0")/../.." && pwd); SHARED=${SHARED:-$TOP/../shared}; OUT=${OUT:-$TOP/tmp_diag}; mkdir -p "$OUT"
d=$1 tgt=$2 ex=$3; shift 3
for f in "$@"; do
  r=$(OMP_NUM_THREADS=1 nice -n 10 /usr/bin/python3 $SHARED/tools/evaluate.py $SHARED/datasets/$d/${d}_train.csv $f --test $SHARED/datasets/$d/${d}_test.csv --target $tgt ${ex:+--exclude $ex} --json 2>/dev/null)
  echo "$f $r"
done
