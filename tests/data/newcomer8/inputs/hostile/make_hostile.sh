#!/bin/sh
# Recreates the hostile inputs that are not committed (large, FIFO, directory, no permission).
set -e
cd "$(dirname "$0")"
python3 -c "open('huge_line.log','w').write('x'*(20*1024*1024)+'\n[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405\n')"
[ -p fifo.log ] || mkfifo fifo.log
mkdir -p adir
cp ../gpud46_xid13_109.dmesg noperm.dmesg && chmod 000 noperm.dmesg   # root reads it anyway
